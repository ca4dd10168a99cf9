// The confirm page's session, API, views and routing (web/ in docs/README.md).
import { cardEl, cardState, usePage } from './cards.js';
import { announce, drawn, el, main, show, showMore, timeEl, viewsStyle } from './dom.js';
import { S } from './strings.js';

const SETTINGS_SECTIONS = ['notifications', 'passkeys', 'connections', 'grants', 'policy', 'members', 'upstreams', 'workspace', 'slack', 'webhooks'];
const ROUTES = ['/', '/confirm', '/history', '/settings', '/signin', ...SETTINGS_SECTIONS.map((s) => '/settings/' + s)];
const NEXT_KEY = 'countersign.next';
const state = { session: null, csrf: '', ready: false, view: '' };
const SAVED_AT = 'X-Countersign-Saved-At'; // sw.js's list, offline

// Where to go after signing in (the link may open in a new tab).
const remember = {
  get() { try { return localStorage.getItem(NEXT_KEY); } catch (e) { return null; } },
  set(v) { try { localStorage.setItem(NEXT_KEY, v); } catch (e) { /* not kept */ } },
  clear() { try { localStorage.removeItem(NEXT_KEY); } catch (e) { /* nothing kept */ } },
};

function markReady(view) {
  state.view = view;
  document.body.dataset.view = view;
  if (!state.ready) {
    state.ready = true;
    performance.mark('app-ready');
    document.body.dataset.ready = '1';
  }
}

// The first card can be answered (bench/page.py).
function markUsable() {
  if (!performance.getEntriesByName('confirm-usable').length
    && document.querySelector('button[data-action="confirm"]:enabled')) performance.mark('confirm-usable');
}

// ---- the API

class ApiError extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    let message = err.message || (body && typeof body.detail === 'string' ? body.detail : '');
    if (!message) message = status === 0 ? S.unreachable : S.answered(status);
    super(message);
    this.status = status;
    this.code = err.code || '';
    this.card = body && body.card ? body.card : null;
    this.field = (body && body.field) || '';
  }
}

// The first view's answers, asked for by index.html's inline script: each used once.
let early = null;
function takeEarlyAnswers() {
  early = window.countersignEarly || {};
}

function takeEarly(path) {
  if (!early || !Object.hasOwn(early, path)) return undefined;
  const answer = early[path];
  delete early[path];
  return answer;
}

async function api(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (method !== 'GET' && state.csrf) headers['X-CSRF-Token'] = state.csrf;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && !state.csrf && sessionAsked) {
    await sessionAsked;
    if (state.csrf) headers['X-CSRF-Token'] = state.csrf;
  }
  const early = method === 'GET' ? takeEarly(path) : undefined;
  let res;
  try {
    res = early !== undefined ? await early : await fetch('/api' + path, {
      method, headers, credentials: 'same-origin', cache: 'no-store',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    res = null;
  }
  if (!res) throw new ApiError(0, null);
  let data = null;
  if (res.status !== 204) {
    try { data = await res.json(); } catch (e) { data = null; }
  }
  const saved = res.headers.get(SAVED_AT);
  if (saved && data && typeof data === 'object') data.savedAt = saved;
  if (!res.ok) throw Object.assign(new ApiError(res.status, data), { retryAfter: Number(res.headers.get('Retry-After')) || 0 });
  return data;
}

function setSession(data) {
  const before = state.csrf;
  state.session = data && data.person ? data : null;
  state.csrf = (data && data.csrfToken) || '';
  if (state.session && state.csrf !== before) renewPush();
  showNav(!!state.session);
  // Card emails to this person stopped (a bounce or a complaint).
  const notice = document.getElementById('email-notice');
  const text = state.session && state.session.emailNotice ? state.session.emailNotice.message : '';
  notice.textContent = text;
  notice.hidden = !text;
}

function showNav(shown) {
  document.getElementById('nav').hidden = !shown;
}

// The session asked for beside the first view, which is drawn without waiting for it: a change
// (its CSRF token) waits for it, and the view is ready once it is in.
let sessionAsked = null;
function askSession() {
  const asked = loadSession();
  sessionAsked = asked.catch(() => null);
  return asked;
}

// Signed in (a page load, a link, a passkey): this device's notifications show cards again until
// this session ends (web/push.js; docs/channels.md). Only where notifications are on, after the view.
function renewPush() {
  if (!('Notification' in window) || Notification.permission !== 'granted' || !('serviceWorker' in navigator)) return;
  setTimeout(() => import('./push.js').then((push) => push.renewThisDevice(api)).catch(() => null), 0);
}

async function loadSession() {
  try {
    setSession(await api('GET', '/session'));
  } catch (e) {
    if (e.status !== 401) throw e;
    setSession(null);
  }
  return state.session;
}

// ---- views

const FIRST_SCREEN = 4;

async function viewPending(prefetched) {
  const list = el('div', { class: 'cards' });
  const count = el('p', { class: 'count' });
  const more = el('button', { type: 'button', class: 'secondary wide', hidden: true }, S.showMore);
  const answered = new Set();
  let cursor = null;
  let waiting = null; // how many wait in all, as the server counted

  const pendingShown = () => [...list.querySelectorAll('article.card[data-state="pending"]')];
  const updateCount = () => {
    const n = Math.max(waiting === null ? 0 : waiting, pendingShown().length);
    count.textContent = S.waitingCount(n);
    document.title = n ? S.tabTitle(n) : S.app;
  };
  const add = (cards) => {
    const have = new Set([...list.children].map((a) => a.dataset.cardId));
    for (const c of cards) if (!have.has(c.id)) list.append(cardEl(c, { onAnswered }));
  };
  // After an answer or back in view: new cards, and what became of those no longer waiting.
  const refresh = async () => {
    let page;
    try { page = await api('GET', '/cards'); } catch (e) { return; }
    const fresh = new Set(page.cards.map((c) => c.id));
    for (const article of pendingShown()) {
      const id = article.dataset.cardId;
      if (fresh.has(id) || answered.has(id) || article.querySelector('.answer button:disabled')) continue;
      try {
        const view = await api('GET', '/cards/' + encodeURIComponent(id));
        if (cardState(view) !== 'pending') article.replaceWith(cardEl(view, { onAnswered }));
      } catch (e) {
        if (e.status === 404) article.remove();
      }
    }
    add(page.cards);
    if (!cursor) { cursor = page.nextCursor || null; more.hidden = !cursor; }
    waiting = typeof page.waiting === 'number' ? page.waiting : null;
    updateCount();
  };
  function onAnswered(id) {
    answered.add(id);
    if (waiting !== null) waiting = Math.max(0, waiting - 1);
    updateCount();
    refresh();
  }

  const first = await (prefetched || api('GET', '/cards'));
  // The first screenful now, the rest in short tasks: no long task on a slow phone.
  add(first.cards.slice(0, FIRST_SCREEN));
  cursor = first.nextCursor || null;
  waiting = typeof first.waiting === 'number' ? first.waiting : null;
  more.hidden = !cursor;
  more.addEventListener('click', () => showMore(more, signedOut, async () => {
    const page = await api('GET', '/cards?cursor=' + encodeURIComponent(cursor));
    add(page.cards);
    cursor = page.nextCursor || null;
    more.hidden = !cursor;
    updateCount();
  }));
  updateCount();
  show(el('h1', {}, S.waitingTitle), count, list, more);
  markUsable();
  for (let i = FIRST_SCREEN; i < first.cards.length; i += FIRST_SCREEN) {
    await new Promise((resolve) => setTimeout(resolve));
    add(first.cards.slice(i, i + FIRST_SCREEN));
  }
  onVisible = refresh;
}

async function viewOneCard(id, prefetched) {
  let card;
  try {
    card = await (prefetched || api('GET', '/cards/' + encodeURIComponent(id)));
  } catch (e) {
    if (e.status === 401) throw e;
    const why = e.status === 404 ? S.noSuchCard : e.message;
    show(el('h1', {}, S.request), el('p', { class: 'error', role: 'alert' }, why), allLink());
    return;
  }
  const article = cardEl(card, { heading: 'h1', onAnswered: () => {} });
  show(article, allLink());
  markUsable();
  onVisible = async () => {
    if (article.dataset.state !== 'pending' || article.querySelector('.answer button:disabled')) return;
    try {
      const view = await api('GET', '/cards/' + encodeURIComponent(id));
      if (cardState(view) !== 'pending') article.replaceWith(cardEl(view, { heading: 'h1' }));
    } catch (e) { /* keep what is shown */ }
  };
}

function allLink() {
  return el('p', { class: 'back' }, el('a', { href: '/confirm', 'data-nav': true }, S.seeAllWaiting));
}

async function signedOut() {
  setSession(null);
  remember.set(location.pathname + location.search);
  await viewSignin(null, true);
  markReady('signin');
}

async function viewHistory() {
  const list = el('div', { class: 'cards history' });
  const more = el('button', { type: 'button', class: 'secondary wide', hidden: true }, S.showMore);
  let cursor = null;
  const load = async (c) => {
    const page = await api('GET', '/history' + (c ? '?cursor=' + encodeURIComponent(c) : ''));
    for (const card of page.cards) list.append(cardEl(card, { answerable: false, reopenable: true }));
    cursor = page.nextCursor || null;
    more.hidden = !cursor;
    return page.cards.length;
  };
  const n = await load(null);
  more.addEventListener('click', () => showMore(more, signedOut, () => load(cursor)));
  show(el('h1', {}, S.history), el('p', { class: 'count' }, n ? S.historyIntro : S.historyEmpty), list, more);
}

function safeNext(value) {
  if (!value || typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//')) return '/confirm';
  const path = value.split(/[?#]/)[0];
  return ROUTES.includes(path) && path !== '/signin' ? value : '/confirm';
}

// Signing in: signin.js, loaded when a view needs it.
const signinApp = { api, setSession, safeNext, navigate: (href, replace) => navigate(href, replace), remember, state };
async function viewSignin(token, reason) {
  return (await import('./signin.js')).viewSignin(signinApp, token, reason);
}

// ---- routing

let onVisible = null;

function setNav(path) {
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.getAttribute('href') === path) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

async function route(signinToken) {
  onVisible = null;
  const path = ROUTES.includes(location.pathname) ? location.pathname : '/confirm';
  const section = path.startsWith('/settings/') ? path.slice('/settings/'.length) : '';
  setNav(path === '/' ? '/confirm' : section ? '/settings' : path);
  if (path === '/signin') {
    if (state.session === null) await loadSession().catch(() => null);
    await viewSignin(signinToken, false);
    return 'signin';
  }
  // OAuth consent (consent.js): no nav item is current there.
  const authorize = path === '/confirm' ? new URLSearchParams(location.search).get('authorize') : null;
  const refused = path === '/confirm' ? new URLSearchParams(location.search).get('authorize_error') : null;
  if (authorize || refused) setNav(null);
  if (refused) {
    const [{ viewConsentRefused }] = await Promise.all([import('./consent.js'), viewsStyle()]);
    viewConsentRefused(refused, { el, show });
    return 'consent';
  }
  if (authorize) {
    if (!state.session && !(await loadSession())) {
      remember.set(location.pathname + location.search);
      await viewSignin(null, 'consent');
      return 'signin';
    }
    try {
      const [{ viewConsent }] = await Promise.all([import('./consent.js'), viewsStyle()]);
      await viewConsent(authorize, { api, el, show, announce });
      return 'consent';
    } catch (e) {
      if (e.status !== 401) throw e;
      setSession(null);
      remember.set(location.pathname + location.search);
      await viewSignin(null, 'consent');
      return 'signin';
    }
  }
  // The list and a card: drawn from their answer (a 401 there: signed out) while the session is
  // checked; an answer from the server (not the offline copy) shows the person is signed in.
  const card = path === '/history' || path.startsWith('/settings') ? null : new URLSearchParams(location.search).get('card');
  let prefetched = null;
  let session = null;
  if (!state.session && (path === '/' || path === '/confirm')) {
    prefetched = api('GET', card ? '/cards/' + encodeURIComponent(card) : '/cards');
    prefetched.then((answer) => { if (!answer.savedAt) showNav(true); }, () => null);
    session = askSession();
    session.catch(() => null); // awaited once the view is drawn
  } else if (!state.session && !(await loadSession())) {
    remember.set(location.pathname + location.search);
    await viewSignin(null, true);
    return 'signin';
  }
  try {
    if (path === '/history') { await viewHistory(); return 'history'; }
    if (path.startsWith('/settings')) {
      const [{ viewSettings }] = await Promise.all([import('./settings.js'), viewsStyle()]);
      await viewSettings({ api, el, show, announce, navigate, setSession, timeEl, session: state.session }, section);
      return 'settings';
    }
    if (card) { await viewOneCard(card, prefetched); await signedIn(session); return 'card'; }
    const saved = prefetched && await prefetched.catch(() => null);
    if (saved && saved.savedAt) { viewOffline(saved); return 'offline'; }
    await viewPending(prefetched);
    await signedIn(session);
    return 'confirm';
  } catch (e) {
    if (e.status === 401) {
      setSession(null);
      remember.set(location.pathname + location.search);
      await viewSignin(null, true);
      return 'signin';
    }
    throw e;
  }
}

// The session asked for beside the view: signed out after all (a 401), as if the view had said so.
async function signedIn(session) {
  if (session && !(await session)) throw new ApiError(401, null);
}

async function render(signinToken) {
  let view = 'error';
  try {
    view = await route(signinToken);
  } catch (e) {
    const saved = e.status === 0 ? await savedList() : null;
    if (saved) {
      viewOffline(saved);
      view = 'offline';
    } else {
      show(el('h1', {}, S.wentWrong), el('p', { class: 'error', role: 'alert' }, e.message),
        el('p', {}, el('a', { href: location.pathname + location.search }, S.tryAgain)));
    }
  }
  await drawn();
  const first = !state.ready;
  early = null;
  markReady(view);
  if (first) registerWorker();
  // After an in-page navigation, focus the new content (as a page load would).
  if (!first) main().focus({ preventScroll: true });
}

// ---- offline and installable

async function savedList() {
  const query = new URLSearchParams(location.search);
  if (!['/', '/confirm'].includes(location.pathname) || query.get('card') || query.get('authorize')) return null;
  try {
    const page = await api('GET', '/cards');
    return page && page.savedAt ? page : null;
  } catch (e) {
    return null;
  }
}

// Offline: the last list, stale, nothing to press; tried again every 1 ... 30 s while online.
const retry = { timer: 0, after: 1000 };
function viewOffline(page) {
  clearTimeout(retry.timer);
  if (navigator.onLine) {
    retry.timer = setTimeout(() => { if (state.view === 'offline') render(null); }, retry.after);
    retry.after = Math.min(retry.after * 2, 30000);
  }
  const list = el('div', { class: 'cards' }, page.cards.map((c) => cardEl(c, {})));
  for (const control of list.querySelectorAll('.answer button, .answer textarea')) control.disabled = true;
  show(el('h1', {}, S.waitingTitle),
    el('p', { class: 'notice', role: 'status', 'data-stale': true }, S.offline(timeEl(page.savedAt) || S.earlier)),
    list);
  onVisible = () => render(null);
}

window.addEventListener('online', () => {
  retry.after = 1000;
  if (state.view === 'offline') render(null);
});

// sw.js (the page's files, the last list): after the first view, never before.
function registerWorker() {
  if (!('serviceWorker' in navigator)) return;
  setTimeout(() => navigator.serviceWorker.register('/sw.js').catch(() => null), 0);
}

function navigate(href, replace) {
  if (replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  window.scrollTo(0, 0);
  render(null);
}

document.addEventListener('click', (ev) => {
  const a = ev.target.closest && ev.target.closest('a[data-nav]');
  if (!a || ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  ev.preventDefault();
  navigate(a.getAttribute('href'));
});
window.addEventListener('popstate', () => render(null));
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && onVisible) onVisible();
});

// The sign-in token is in the fragment (never sent, never in a Referer): out of the address bar first.
function takeSigninToken() {
  if (location.pathname !== '/signin' || !location.hash) return null;
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  history.replaceState(null, '', location.pathname + location.search);
  return token || null;
}

takeEarlyAnswers();
for (const a of document.querySelectorAll('#nav a')) a.textContent = S.nav[a.dataset.view];
usePage({ api, setSession, navigate });
render(takeSigninToken());
