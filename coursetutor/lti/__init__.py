"""LTI 1.3 (IMS LTI Core and LTI Advantage): coursetutor as a tool inside an LMS.

`registry` registers a tenant's platforms, `dynamic` lets a platform register itself (LTI
Dynamic Registration); `launch` checks a platform's signed launch (`keyset` fetches and caches
its keys; `storage` names the platform's postMessage storage its pages use); `claims` reads
what the launch says (roles, LMS course, services); `tool_keys` are the tool's own signing
keys; `deep_link` answers a deep linking request, `focus` checks the document or live class a
link opens; `services` calls the platform (OAuth 2 client credentials, then its roster and
grade book); `roster` turns the roster into enrolments and `grades` sends mastery as scores.
Nothing here speaks HTTP to a browser: the routes are `api/routes_lti.py` and
`api/routes_lti_register.py`.
"""
