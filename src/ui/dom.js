// @ts-check
/**
 * DOM helpers. Elements are built from text and attributes only: nothing here parses markup, so
 * stored bytes and names can never turn into page content.
 */
import { formatTime } from './format.js';

/** An element of the page by id; a missing one is a bug in index.html. @param {string} id */
export function el(id) {
  const node = document.getElementById(id);
  if (!node) throw new Error(`#${id} is missing from the page`);
  return node;
}

/** @template {HTMLElement} T @param {string} id @param {new () => T} type @returns {T} */
export function elOf(id, type) {
  const node = el(id);
  if (!(node instanceof type)) throw new Error(`#${id} is not a ${type.name}`);
  return node;
}

/**
 * A new element with text content (never markup) and attributes.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag @param {Record<string, string>} [attrs] @param {(Node | string)[]} [children]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
}

/** A <time> showing the short form, with the exact instant on hover. @param {string} iso */
export const timeEl = (iso) => h('time', { datetime: iso, title: iso }, [formatTime(iso)]);
