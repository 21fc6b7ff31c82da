// The LMS platform's storage, for a page in its frame (1EdTech LTI Client Side postMessages):
// `lti.capabilities` says which messages the platform answers and in which frame, then
// `lti.put_data` and `lti.get_data` keep and read a value under a key of this tool's.
//
// A message is read only from the platform's origins the launch named (those its registration
// lists), never from any origin: one from another origin is ignored and logged without its
// content. Every request carries its own message id and fails after TIMEOUT_MS without an
// answer. Requests go to the platform's origin, never to "*".

const TIMEOUT_MS = 2000;
const pending = new Map(); // message id -> { subject, origins, resolve, reject, timer }
const trusted = new Set(); // every origin a storage of this page reads from

function isLti(subject) {
  return typeof subject === "string" && /^(org\.imsglobal\.)?lti\./.test(subject);
}

function onMessage(event) {
  const data = event.data;
  if (!data || typeof data !== "object" || !isLti(data.subject)) return; // not for us
  if (!trusted.has(event.origin)) {
    console.warn(`coursetutor: ignored an LTI message (${data.subject}) from ${event.origin}, `
      + "an origin the platform's registration does not list");
    return;
  }
  const request = pending.get(data.message_id);
  if (!request || !request.origins.includes(event.origin)) return;
  if (data.subject.replace(/^org\.imsglobal\./, "") !== `${request.subject}.response`) return;
  pending.delete(data.message_id);
  clearTimeout(request.timer);
  if (data.error) request.reject(new StorageError(String(data.error.code || "error")));
  else request.resolve(data);
}

/** A request the platform refused (its error code), did not answer (`timeout`) or cannot
 * take (`unsupported`). */
export class StorageError extends Error {
  constructor(code) {
    super(`the platform's storage answered ${code}`);
    this.code = code;
  }
}

function messageId() {
  return `coursetutor-${crypto.randomUUID()}`;
}

/**
 * The storage of the platform whose launch named it: `target` the frame that answers (its
 * login's `lti_storage_target`: `_parent` or the name of a frame of the parent), `origin` the
 * origin it answers from, `origins` every origin of the platform (its capabilities may come
 * from one of them).
 */
export class PlatformStorage {
  constructor({ target, origin, origins }) {
    this.target = target || "_parent";
    this.origin = origin;
    this.origins = [...new Set([origin, ...(origins || [])])].filter(Boolean);
    for (const each of this.origins) trusted.add(each);
    this.capabilities = null;
    window.addEventListener("message", onMessage); // once: the same listener is not added twice
  }

  #send(win, data, origins) {
    const id = messageId();
    const asked = { ...data, message_id: id };
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new StorageError("timeout"));
      }, TIMEOUT_MS);
      pending.set(id, { subject: data.subject.replace(/^org\.imsglobal\./, ""), origins,
                        resolve, reject, timer });
      // the parent's own origin where the browser says it, else each of the platform's: the
      // browser delivers the message to the one that matches only
      const parent = window.location.ancestorOrigins?.[0];
      const to = win === window.parent && origins.includes(parent) ? [parent] : origins;
      for (const origin of to) win.postMessage(asked, origin);
    });
  }

  /** The frame (and subject) that answers `subject`, as the platform's capabilities say. */
  async #route(subject) {
    const host = window.opener || window.parent; // the LMS's window: framing or opening this
    if (host === window) throw new StorageError("unsupported");
    this.capabilities ??= this.#send(host, { subject: "lti.capabilities" }, this.origins);
    const reply = await this.capabilities;
    const found = (reply.supported_messages || []).find(
      (m) => m && m.subject?.replace(/^org\.imsglobal\./, "") === subject);
    if (!found) throw new StorageError("unsupported");
    const frame = found.frame || this.target;
    const win = frame === "_parent" ? host : host.frames[frame];
    if (!win) throw new StorageError("unsupported");
    return { win, subject: found.subject };
  }

  /** Keep `value` under `key`. */
  async put(key, value) {
    const { win, subject } = await this.#route("lti.put_data");
    await this.#send(win, { subject, key, value }, [this.origin]);
  }

  /** The value kept under `key`, or null. */
  async get(key) {
    const { win, subject } = await this.#route("lti.get_data");
    const reply = await this.#send(win, { subject, key }, [this.origin]);
    return typeof reply.value === "string" ? reply.value : null;
  }
}
