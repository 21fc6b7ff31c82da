// The teacher page's LMS platforms (LTI 1.3), for a tenant's admins: the registered platforms
// with a remove button, the tenant's dynamic registration URL, and a form to add a platform by
// hand with what the LMS shows about the tool.

import { t } from "./i18n.js";
import { $, el, enc, listOf, showError } from "./common.js";

function platformItem(platform, remove) {
  return el("li", { "data-testid": "lms-platform", dataset: { platform: platform.id } },
    el("span", {}, el("strong", {}, platform.issuer), " ",
      t("lms.client", { client: platform.client_id }), " · ",
      t("lms.deployments", { deployments: (platform.deployment_ids || []).join(", ") })),
    el("button", {
      type: "button", class: "secondary", "aria-label": `${t("lms.remove")}: ${platform.issuer}`,
      onclick: () => remove(platform),
    }, t("lms.remove")));
}

const FIELDS = ["issuer", "client_id", "jwks_url", "auth_login_url", "token_url"];

function formBody(form) {
  const value = (name) => form.elements[name].value.trim();
  const list = (name) => value(name).split(/[\s,]+/).filter(Boolean);
  const body = Object.fromEntries(FIELDS.map((name) => [name, value(name)]));
  body.deployment_ids = list("deployment_ids");
  const framers = list("frame_origins");
  if (framers.length) body.frame_origins = framers;
  return body;
}

/** Wire the section; the returned `show(me)` shows it to admins only and loads it. */
export function setupLms(api) {
  const section = $("lms");
  const list = $("lms-platforms");
  const form = $("lms-form");
  const url = $("lms-url");

  async function load() {
    showError("lms-error", null);
    let platforms;
    try {
      platforms = listOf(await api.get("/v1/lti/platforms"), "platforms");
    } catch (err) {
      showError("lms-error", err);
      return;
    }
    list.replaceChildren(...(platforms.length ? platforms.map((p) => platformItem(p, remove))
      : [el("li", { class: "muted" }, t("lms.none"))]));
  }

  async function remove(platform) {
    if (!window.confirm(t("lms.remove_confirm", { issuer: platform.issuer }))) return;
    try {
      await api.del(`/v1/lti/platforms/${enc(platform.id)}`);
    } catch (err) {
      showError("lms-error", err);
      return;
    }
    await load();
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    showError("lms-form-error", null);
    try {
      await api.post("/v1/lti/platforms", formBody(form));
    } catch (err) {
      showError("lms-form-error", err);
      return;
    }
    form.reset();
    $("lms-added").textContent = t("lms.added");
    await load();
  });

  $("lms-url-make").addEventListener("click", async () => {
    showError("lms-error", null);
    try {
      const made = await api.post("/v1/lti/registration-url", {});
      url.value = made.url;
      url.hidden = false;
      $("lms-url-expires").textContent = t("lms.url_expires", {
        when: new Date(made.expires * 1000).toLocaleString() });
      url.select();
    } catch (err) {
      showError("lms-error", err);
    }
  });
  $("lms-refresh").addEventListener("click", () => load());

  return function show(me) {
    section.hidden = !(me && me.role === "admin");
    if (!section.hidden) load();
  };
}
