// The pages' own text in the browser's language (the languages the tutor answers in, one
// file each under lang/; English otherwise). Markup names a string with data-i18n (text),
// data-i18n-placeholder, data-i18n-aria-label or data-i18n-title; scripts call
// t(key, {name: value}). tests/test_web_i18n.py fails when a key lacks a language.

import de from "./lang/de.js";
import en from "./lang/en.js";
import fr from "./lang/fr.js";
import it from "./lang/it.js";
import ko from "./lang/ko.js";
import zh from "./lang/zh.js";

const STRINGS = { en, it, de, fr, zh, ko };

export const LANGUAGES = Object.keys(STRINGS);

/** The first of the browser's languages we have text for ("?lang=it" overrides). */
export function pickLanguage(preferred = null) {
  const wanted = [];
  const override = new URLSearchParams(window.location.search).get("lang");
  if (override) wanted.push(override);
  wanted.push(...(preferred || navigator.languages || [navigator.language || "en"]));
  for (const tag of wanted) {
    const base = String(tag || "").toLowerCase().split(/[-_]/)[0];
    if (base in STRINGS) return base;
  }
  return "en";
}

export const lang = pickLanguage();

/** The string `key` in the page language, with {name} filled from `vars`. */
export function t(key, vars = {}) {
  const text = STRINGS[lang][key] ?? STRINGS.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name) =>
    name in vars ? String(vars[name]) : whole);
}

/** Whether a string exists for `key`. */
export function has(key) {
  return key in STRINGS.en;
}

/** The translated label for `prefix.value`, or the value itself when there is none. */
export function label(prefix, value) {
  const key = `${prefix}.${value}`;
  return has(key) ? t(key) : String(value ?? "");
}

/** Fill every data-i18n* attribute under `root` and set <html lang>. */
export function applyI18n(root = document) {
  document.documentElement.lang = lang;
  for (const el of root.querySelectorAll("[data-i18n]")) {
    el.textContent = t(el.dataset.i18n);
  }
  for (const [attr, name] of [["i18nPlaceholder", "placeholder"],
    ["i18nAriaLabel", "aria-label"], ["i18nTitle", "title"]]) {
    const selector = "[data-" + attr.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase()) + "]";
    for (const el of root.querySelectorAll(selector)) {
      el.setAttribute(name, t(el.dataset[attr]));
    }
  }
  const titleKey = document.body?.dataset.titleKey;
  if (titleKey) document.title = t(titleKey);
}
