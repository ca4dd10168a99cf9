// Drawing helpers: text from data is set as text (el()), never as markup.
import { LOCALES, S } from './strings.js';

// el('p', {class: 'x', onclick: fn}, 'text', child, [more])
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, '');
    else node.setAttribute(key, String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export const main = () => document.getElementById('main');

export function show(...children) {
  const m = main();
  m.replaceChildren();
  append(m, children);
}

export function announce(text) {
  const s = document.getElementById('status');
  s.textContent = '';
  setTimeout(() => { s.textContent = text; }, 30);
}

// "Show more": the next page, or why not beside the button.
export async function showMore(button, onSignedOut, loadNext) {
  button.disabled = true;
  if (button.previousElementSibling?.classList.contains('more-error')) button.previousElementSibling.remove();
  try {
    await loadNext();
  } catch (e) {
    if (e.status === 401) return onSignedOut();
    button.before(el('p', { class: 'error more-error', role: 'alert' },
      S.loadMoreFailed(e.message)));
  } finally { button.disabled = false; }
}

// ---- a card's title

// In bold: a recipient ("to Ada (Acme):"), quoted names, emails, figures ("25.00 USD").
const EMPHASIS = new RegExp([
  '(?<=\\bto )\\p{Lu}[^:?‘“\\n]{0,79}(?=:)',
  '‘[^’\\n]{1,80}’', '“[^”\\n]{1,80}”',
  '[^\\s@‘“]+@[^\\s@]+\\.[^\\s@:?,;)’”]+',
  '(?<![\\p{L}\\p{N}_.,-])[-+−]?[$€£¥]?\\d(?:[\\d,.-]*\\d)?(?: ?(?:credits?|USD|EUR|GBP|%))?',
].join('|'), 'gu');

export function emphasised(text) {
  text = String(text);
  const parts = [];
  let last = 0;
  for (const m of text.matchAll(EMPHASIS)) {
    if (m.index > last) parts.push(text.slice(last, m.index));
    parts.push(el('strong', {}, m[0]));
    last = m.index + m[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

// ---- time

function toDate(value) {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'number') return new Date(value < 1e12 ? value * 1000 : value);
  const d = new Date(value);
  return isNaN(d.getTime()) ? null : d;
}

// Built on first use (index.html set Intl up while the files downloaded).
const formatters = {};
const relative = () => formatters.relative
  || (formatters.relative = new Intl.RelativeTimeFormat(LOCALES, { numeric: 'auto', style: 'short' }));
const absolute = () => formatters.absolute
  || (formatters.absolute = new Intl.DateTimeFormat(LOCALES, { dateStyle: 'medium', timeStyle: 'short' }));

export const dateText = (value) => {
  const d = toDate(value);
  return d ? absolute().format(d) : S.never;
};

function fromNow(date) {
  const seconds = Math.round((date.getTime() - Date.now()) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 60) return relative().format(Math.round(seconds), 'second');
  if (abs < 3600) return relative().format(Math.round(seconds / 60), 'minute');
  if (abs < 86400 * 2) return relative().format(Math.round(seconds / 3600), 'hour');
  return relative().format(Math.round(seconds / 86400), 'day');
}

// <time>s are filled in later tasks, after the first cards.
const unfilled = [];
let filling = null;
const pause = () => new Promise((resolve) => setTimeout(resolve));

async function fillTimes() {
  await pause();
  while (unfilled.length) {
    const [node, d, phrase] = unfilled.shift();
    append(node, [phrase ? phrase(fromNow(d)) : fromNow(d)]);
    node.title = absolute().format(d);
  }
  filling = null;
}

// views.css (what is loaded on demand): added once; resolves when it applies.
let viewsCss = null;
export const viewsStyle = () => viewsCss || (viewsCss = new Promise((resolve) =>
  document.head.append(el('link', { rel: 'stylesheet', href: '/views.css', onload: resolve, onerror: resolve }))));

// Parts drawn in later tasks: a view is ready when they are.
const drawing = new Set();
export function drawLater(promise) {
  const part = promise.catch(() => null).finally(() => drawing.delete(part));
  drawing.add(part);
}

export async function drawn() {
  while (drawing.size) await Promise.all(drawing);
}

// "5 min. ago", or in a phrase: "expires in 2 days".
export function timeEl(value, phrase) {
  const d = toDate(value);
  if (!d) return null;
  const node = el('time', { datetime: d.toISOString() });
  unfilled.push([node, d, phrase]);
  if (!filling) drawLater(filling = fillTimes());
  return node;
}
