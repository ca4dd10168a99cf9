// countersign confirm page: no framework, no build step, no third-party request.
// Every piece of text that comes from data is set with textContent (through el()), never as markup.
import * as passkeys from './passkeys.js';

const ROUTES = ['/', '/confirm', '/history', '/settings', '/signin'];
const NEXT_KEY = 'countersign.next';
const state = { session: null, csrf: '', ready: false, view: '' };

// Where to go after signing in (the link may open in a new tab). Storage can be unavailable.
const remember = {
  get() { try { return localStorage.getItem(NEXT_KEY); } catch (e) { return null; } },
  set(v) { try { localStorage.setItem(NEXT_KEY, v); } catch (e) { /* not kept */ } },
  clear() { try { localStorage.removeItem(NEXT_KEY); } catch (e) { /* nothing kept */ } },
};

// ---- DOM helpers ---------------------------------------------------------------------------------

// el('p', {class: 'x', onclick: fn}, 'text', child, [more]) — strings become text nodes.
function el(tag, attrs, ...children) {
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

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const main = () => document.getElementById('main');

function show(...children) {
  const m = main();
  m.replaceChildren();
  append(m, children);
}

function announce(text) {
  const s = document.getElementById('status');
  s.textContent = '';
  setTimeout(() => { s.textContent = text; }, 30);
}

function markReady(view) {
  state.view = view;
  document.body.dataset.view = view;
  if (!state.ready) {
    state.ready = true;
    performance.mark('app-ready');
    document.body.dataset.ready = '1';
  }
}

// ---- the API ---------------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    let message = err.message || (body && typeof body.detail === 'string' ? body.detail : '');
    if (!message) message = status === 0 ? 'Could not reach the server. Check your connection and try again.'
      : `The server answered ${status}.`;
    super(message);
    this.status = status;
    this.code = err.code || '';
    this.card = body && body.card ? body.card : null;
    this.field = (body && body.field) || '';
  }
}

async function api(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (method !== 'GET' && state.csrf) headers['X-CSRF-Token'] = state.csrf;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch('/api' + path, {
      method, headers, credentials: 'same-origin', cache: 'no-store',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(0, null);
  }
  let data = null;
  if (res.status !== 204) {
    try { data = await res.json(); } catch (e) { data = null; }
  }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

function setSession(data) {
  state.session = data && data.person ? data : null;
  state.csrf = (data && data.csrfToken) || '';
  document.getElementById('nav').hidden = !state.session;
  // Card emails to this person stopped (a bounce or a spam complaint SES reported): say so.
  const notice = document.getElementById('email-notice');
  const text = state.session && state.session.emailNotice ? state.session.emailNotice.message : '';
  notice.textContent = text;
  notice.hidden = !text;
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

// ---- time ------------------------------------------------------------------------------------------

function toDate(value) {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'number') return new Date(value < 1e12 ? value * 1000 : value);
  const d = new Date(value);
  return isNaN(d.getTime()) ? null : d;
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto', style: 'short' });
const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

function fromNow(date) {
  const seconds = Math.round((date.getTime() - Date.now()) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 60) return relative.format(Math.round(seconds), 'second');
  if (abs < 3600) return relative.format(Math.round(seconds / 60), 'minute');
  if (abs < 86400 * 2) return relative.format(Math.round(seconds / 3600), 'hour');
  return relative.format(Math.round(seconds / 86400), 'day');
}

function timeEl(value, prefix) {
  const d = toDate(value);
  if (!d) return null;
  return el('time', { datetime: d.toISOString(), title: absolute.format(d) }, prefix ? prefix + ' ' : '', fromNow(d));
}

// ---- cards -----------------------------------------------------------------------------------------

const REFUSALS = {
  changed: 'Refused: this changed since the card was drawn',
  withdrawn: 'Refused: the agent withdrew this request',
  expired: 'Refused: this request expired',
  already_answered: 'Already answered',
  being_confirmed: 'This is being confirmed right now',
  busy: 'Not this time: nothing ran — try again in a moment',
  tampered: 'Refused: this card was tampered with',
  not_yours: 'This request waits on someone else',
  not_found: 'This request no longer exists',
  signed_out: 'You are signed out',
};

const OUTCOMES = {
  completed: 'Confirmed — it ran',
  failed: 'Confirmed — but it failed',
  declined: 'Declined',
  withdrawn: 'Withdrawn by the agent — nothing ran',
  expired: 'Expired — nothing ran',
  running: 'Being confirmed…',
  pending: 'Waiting for your answer',
};

function cardState(card) {
  return (card && (card.state || card.status)) || 'pending';
}

function valueText(value) {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function resultEl(result) {
  if (result === null || result === undefined) return null;
  if (typeof result !== 'object' || Array.isArray(result)) return el('p', { class: 'result' }, valueText(result));
  const entries = Object.entries(result).slice(0, 30);
  if (!entries.length) return null;
  return el('dl', { class: 'result' }, entries.map(([k, v]) => [el('dt', {}, k), el('dd', {}, valueText(v))]));
}

function nextEl(next) {
  if (!Array.isArray(next) || !next.length) return null;
  return el('div', { class: 'next' },
    el('p', { class: 'label' }, 'Next steps for the agent'),
    el('ul', {}, next.slice(0, 10).map((s) => el('li', {},
      s && s.description ? s.description : valueText(s),
      s && s.personMustAct ? el('strong', {}, ' (you will need to act)') : null))));
}

// The outcome box of a card: its final state, or why a click was refused.
function outcomeEl(card, refusal) {
  const st = cardState(card);
  // A card refused at the click because its data moved is stored as declined, marked refusal: changed.
  const changed = !refusal && st === 'declined' && card && card.refusal === 'changed';
  if (changed) refusal = { code: 'changed', message: card.reason };
  const key = refusal ? refusal.code || 'error' : st;
  const good = !refusal && st === 'completed';
  const box = el('div', { class: 'outcome ' + (good ? 'ok' : (st === 'pending' && !refusal ? 'info' : 'warn')), 'data-outcome': key });
  const headline = refusal ? (REFUSALS[refusal.code] || 'That did not work') : (OUTCOMES[st] || st);
  box.append(el('p', { class: 'headline' }, headline));
  if (refusal && refusal.message) box.append(el('p', {}, refusal.message));
  if (card && !refusal && st === 'declined' && card.reason) box.append(el('p', {}, 'Reason: ', card.reason));
  if (refusal && card && (key === 'already_answered' || key === 'being_confirmed')) {
    box.append(el('p', { class: 'muted' }, 'Now: ', OUTCOMES[st] || st));
    if (st === 'declined' && card.reason) box.append(el('p', {}, 'Reason: ', card.reason));
  }
  if (card && st === 'completed') append(box, [resultEl(card.result), nextEl(card.next)]);
  if (card && st === 'failed') {
    const err = card.result && typeof card.result === 'object' && card.result.error ? card.result.error : card.reason;
    if (err) box.append(el('p', {}, valueText(err)));
  }
  return box;
}

function cardEl(card, opts) {
  opts = opts || {};
  const st = cardState(card);
  const article = el('article', { class: 'card', 'data-card-id': card.id, 'data-state': st });
  const titleId = 'card-title-' + card.id;
  article.setAttribute('aria-labelledby', titleId);
  article.append(el(opts.heading || 'h2', { class: 'title', id: titleId }, card.title || card.tool || 'Request'));
  const lines = Array.isArray(card.lines) ? card.lines : [];
  if (lines.length) article.append(el('ul', { class: 'lines' }, lines.map((l) => el('li', {}, valueText(l)))));
  const meta = el('p', { class: 'meta' });
  meta.append('Asked by ', el('strong', {}, card.connectionName || 'an agent'));
  const asked = timeEl(card.createdAt);
  if (asked) meta.append(' · ', asked);
  if (st === 'pending') {
    const exp = timeEl(card.expiresAt, 'expires');
    if (exp) meta.append(el('span', { class: 'expires' }, ' · ', exp));
  }
  article.append(meta);
  const outcome = el('div', { class: 'outcome-slot', 'aria-live': 'polite' });
  article.append(outcome);
  if (st === 'pending' && opts.answerable !== false) article.append(actionsEl(card, article, outcome, opts));
  else outcome.append(outcomeEl(card, null));
  if (hasReceipt(card)) article.append(receiptEl(card));
  // A request the person declined can be reopened from History: a new card, waiting for them.
  if (opts.reopenable && st === 'declined' && !card.refusal) article.append(reopenEl(card, outcome));
  return article;
}

// Every completed card has a receipt; one confirmed with a passkey also while running or failed.
const hasReceipt = (card) => cardState(card) === 'completed'
  || (card.passkeySigned && ['running', 'failed'].includes(cardState(card)));

function receiptEl(card) {
  const label = card.passkeySigned ? 'Download the passkey receipt' : 'Download the receipt';
  return el('p', { class: 'receipt' }, el('a', { href: `/api/cards/${encodeURIComponent(card.id)}/receipt`,
    download: `countersign-receipt-${card.id}.json`, 'data-action': 'receipt' }, label),
  ' · check it with ', el('code', {}, 'countersign verify-receipt'));
}

function reopenEl(card, outcome) {
  const btn = el('button', { type: 'button', class: 'secondary', 'data-action': 'reopen' }, 'Ask me again');
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    try {
      const fresh = await api('POST', `/cards/${encodeURIComponent(card.id)}/reopen`);
      navigate('/confirm?card=' + encodeURIComponent(fresh.id));
    } catch (e) {
      btn.remove();
      outcome.append(el('p', { class: 'error', role: 'alert' }, e.message));
    }
  });
  return el('div', { class: 'actions' }, btn);
}

function actionsEl(card, article, outcome, opts) {
  const confirmBtn = el('button', { type: 'button', class: 'primary', 'data-action': 'confirm' },
    card.passkeyRequired ? 'Confirm with passkey' : 'Confirm');
  const declineBtn = el('button', { type: 'button', class: 'secondary', 'data-action': 'decline' }, 'Decline');
  const row = el('div', { class: 'actions' }, confirmBtn, declineBtn);
  const reasonId = 'reason-' + card.id;
  const reason = el('textarea', { id: reasonId, name: 'reason', rows: 2, maxlength: 500, autocomplete: 'off' });
  const sendDecline = el('button', { type: 'submit', class: 'danger', 'data-action': 'send-decline' }, 'Decline');
  const keep = el('button', { type: 'button', class: 'secondary', 'data-action': 'keep' }, 'Keep it');
  const form = el('form', { class: 'decline', hidden: true },
    el('label', { for: reasonId }, 'Reason (optional, the agent sees it)'), reason,
    el('div', { class: 'actions' }, sendDecline, keep));
  const wrap = el('div', { class: 'answer' }, row, form);
  const all = [confirmBtn, declineBtn, sendDecline, keep, reason];

  const busy = (on) => all.forEach((b) => { b.disabled = on; });
  const finish = (view, refusal) => {
    wrap.remove();
    // Without the card as it now stands (not yours, gone, signed out) it is no longer answerable here.
    article.dataset.state = view ? cardState(view) : 'refused';
    const box = outcomeEl(view, refusal);
    if (refusal && refusal.code === 'signed_out') {
      box.append(el('p', {}, el('a', { href: '/signin', 'data-nav': true }, 'Sign in again')));
    }
    outcome.replaceChildren(box);
    if (view && hasReceipt(view)) article.append(receiptEl(view));
    const expires = article.querySelector('.meta .expires');
    if (article.dataset.state !== 'pending' && expires) expires.remove();
    announce(outcome.textContent);
    if (opts.onAnswered) opts.onAnswered(card.id);
  };
  const answer = (path, body, label, btn) =>
    answerWith(() => api('POST', `/cards/${encodeURIComponent(card.id)}/${path}`, body), label, btn);
  const answerWith = async (send, label, btn) => {
    busy(true);
    const before = btn.textContent;
    btn.textContent = label;
    try {
      finish(await send(), null);
    } catch (e) {
      if (e.status === 409 || e.status === 403 || e.status === 404 || e.status === 401) {
        const code = e.code || (e.status === 404 ? 'not_found' : e.status === 401 ? 'signed_out' : 'error');
        finish(e.card, { code, message: e.status === 401 ? 'Sign in again to answer this request.' : e.message });
        if (e.status === 401) setSession(null);
      } else {
        busy(false);
        btn.textContent = before;
        const err = el('p', { class: 'error', role: 'alert' }, e.message);
        outcome.replaceChildren(err);
      }
    }
  };

  confirmBtn.addEventListener('click', () => (card.passkeyRequired
    ? answerWith(() => passkeys.confirmWithPasskey(api, card.id), 'Waiting for your passkey…', confirmBtn)
    : answer('confirm', undefined, 'Confirming…', confirmBtn)));
  if (card.passkeyRequired) {
    wrap.prepend(el('p', { class: 'muted', 'data-passkey-note': true }, passkeys.available()
      ? 'This workspace asks for your passkey to confirm this request.'
      : passkeys.UNAVAILABLE));
  }
  declineBtn.addEventListener('click', () => {
    row.hidden = true;
    form.hidden = false;
    reason.focus();
  });
  keep.addEventListener('click', () => {
    form.hidden = true;
    row.hidden = false;
    declineBtn.focus();
  });
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = reason.value.trim();
    answer('decline', text ? { reason: text } : {}, 'Declining…', sendDecline);
  });
  return wrap;
}

// ---- views -----------------------------------------------------------------------------------------

function countText(n) {
  return n === 0 ? 'Nothing is waiting for you.' : n === 1 ? '1 request is waiting for you.' : `${n} requests are waiting for you.`;
}

async function viewPending(prefetched) {
  const list = el('div', { class: 'cards' });
  const count = el('p', { class: 'count' });
  const more = el('button', { type: 'button', class: 'secondary wide', hidden: true }, 'Show more');
  const answered = new Set();
  let cursor = null;

  const pendingShown = () => [...list.querySelectorAll('article.card[data-state="pending"]')];
  const updateCount = () => {
    const n = pendingShown().length;
    count.textContent = countText(n);
    document.title = n ? `(${n}) countersign` : 'countersign';
  };
  const add = (cards) => {
    const have = new Set([...list.children].map((a) => a.dataset.cardId));
    for (const c of cards) if (!have.has(c.id)) list.append(cardEl(c, { onAnswered }));
  };
  // After an answer (or when the page comes back into view): add new cards, and show what became
  // of cards that are no longer waiting (withdrawn, expired, answered elsewhere).
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
    updateCount();
  };
  function onAnswered(id) {
    answered.add(id);
    updateCount();
    refresh();
  }

  const first = await (prefetched || api('GET', '/cards'));
  add(first.cards);
  cursor = first.nextCursor || null;
  more.hidden = !cursor;
  more.addEventListener('click', async () => {
    more.disabled = true;
    try {
      const page = await api('GET', '/cards?cursor=' + encodeURIComponent(cursor));
      add(page.cards);
      cursor = page.nextCursor || null;
      more.hidden = !cursor;
      updateCount();
    } finally { more.disabled = false; }
  });
  updateCount();
  show(el('h1', {}, 'Waiting for you'), count, list, more);
  onVisible = refresh;
}

async function viewOneCard(id, prefetched) {
  let card;
  try {
    card = await (prefetched || api('GET', '/cards/' + encodeURIComponent(id)));
  } catch (e) {
    if (e.status === 401) throw e;
    const why = e.status === 404 ? 'This request does not exist, or it is not yours to answer.' : e.message;
    show(el('h1', {}, 'Request'), el('p', { class: 'error', role: 'alert' }, why), allLink());
    return;
  }
  const article = cardEl(card, { heading: 'h1', onAnswered: () => {} });
  show(article, allLink());
  onVisible = async () => {
    if (article.dataset.state !== 'pending' || article.querySelector('.answer button:disabled')) return;
    try {
      const view = await api('GET', '/cards/' + encodeURIComponent(id));
      if (cardState(view) !== 'pending') article.replaceWith(cardEl(view, { heading: 'h1' }));
    } catch (e) { /* keep what is shown */ }
  };
}

function allLink() {
  return el('p', { class: 'back' }, el('a', { href: '/confirm', 'data-nav': true }, 'See everything waiting for you'));
}

async function viewHistory() {
  const list = el('div', { class: 'cards history' });
  const more = el('button', { type: 'button', class: 'secondary wide', hidden: true }, 'Show more');
  let cursor = null;
  const load = async (c) => {
    const page = await api('GET', '/history' + (c ? '?cursor=' + encodeURIComponent(c) : ''));
    for (const card of page.cards) list.append(cardEl(card, { answerable: false, reopenable: true }));
    cursor = page.nextCursor || null;
    more.hidden = !cursor;
    return page.cards.length;
  };
  const n = await load(null);
  more.addEventListener('click', async () => {
    more.disabled = true;
    try { await load(cursor); } finally { more.disabled = false; }
  });
  show(el('h1', {}, 'History'),
    n ? el('p', { class: 'count' }, 'Requests you answered, and what became of them.')
      : el('p', { class: 'count' }, 'Nothing answered yet.'),
    list, more);
}

function safeNext(value) {
  if (!value || typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//')) return '/confirm';
  const path = value.split(/[?#]/)[0];
  return ROUTES.includes(path) && path !== '/signin' ? value : '/confirm';
}

function signinForm(heading, intro) {
  const email = el('input', { type: 'email', id: 'email', name: 'email', required: true,
    autocomplete: 'username webauthn',
    inputmode: 'email', maxlength: 254 });
  const submit = el('button', { type: 'submit', class: 'primary' }, 'Email me a sign-in link');
  const note = el('div', { 'aria-live': 'polite' });
  const form = el('form', { class: 'signin' }, el('label', { for: 'email' }, 'Your email'), email, submit, note);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    submit.disabled = true;
    note.replaceChildren();
    try {
      const answer = await api('POST', '/signin/request', { email: email.value.trim() });
      form.replaceChildren(el('div', { class: 'outcome ok', 'data-outcome': 'sent' },
        el('p', { class: 'headline' }, 'Check your email'),
        el('p', {}, (answer && answer.message) || 'If that address belongs to a member, a sign-in link is on its way.'),
        el('p', { class: 'muted' }, 'The link works once, for 15 minutes. Open it on this device.')));
    } catch (e) {
      const msg = e.status === 429 ? 'Too many sign-in requests. Wait a few minutes and try again.' : e.message;
      note.append(el('p', { class: 'error', role: 'alert' }, msg));
      submit.disabled = false;
    }
  });
  const withPasskey = passkeys.signinWithPasskey(api, (session) => {
    setSession(session);
    const next = safeNext(remember.get());
    remember.clear();
    navigate(next, true);
  });
  return [el('h1', {}, heading), intro ? el('p', {}, intro) : null, form,
    el('div', { class: 'passkey-signin' }, withPasskey)];
}

async function viewSignin(token, reason) {
  if (token) {
    const btn = el('button', { type: 'button', class: 'primary wide', 'data-action': 'signin' }, 'Sign in');
    const note = el('div', { 'aria-live': 'polite' });
    btn.addEventListener('click', async () => {
      btn.disabled = true;
      btn.textContent = 'Signing in…';
      try {
        setSession(await api('POST', '/signin/complete', { token }));
        const next = safeNext(remember.get());
        remember.clear();
        navigate(next, true);
      } catch (e) {
        btn.remove();
        const msg = e.status === 400 ? 'This sign-in link is invalid, expired or already used. Ask for a new one below.' : e.message;
        show(el('p', { class: 'error', role: 'alert', 'data-outcome': e.code || 'error' }, msg),
          signinForm('Sign in', null));
        note.textContent = '';
      }
    });
    show(el('h1', {}, 'Sign in'), el('p', {}, 'Press the button to finish signing in on this device.'), btn, note);
    return;
  }
  const parts = signinForm(reason === 'consent' ? 'Sign in to connect an agent'
    : reason ? 'Sign in to answer requests' : 'Sign in',
    'We email you a link that signs you in. No password.');
  if (state.session) {
    parts.push(el('p', { class: 'muted' }, 'You are signed in as ', el('strong', {}, state.session.person.email), '. ',
      el('a', { href: '/confirm', 'data-nav': true }, 'See what waits for you')));
  }
  show(parts);
}

// ---- routing ---------------------------------------------------------------------------------------

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
  setNav(path === '/' ? '/confirm' : path);
  if (path === '/signin') {
    if (!signinToken && state.session === null) await loadSession().catch(() => null);
    await viewSignin(signinToken, false);
    return 'signin';
  }
  // OAuth consent: an MCP client sent the person here to allow or deny it (consent.js).
  const authorize = path === '/confirm' ? new URLSearchParams(location.search).get('authorize') : null;
  if (authorize) {
    if (!state.session && !(await loadSession())) {
      remember.set(location.pathname + location.search);
      await viewSignin(null, 'consent');
      return 'signin';
    }
    try {
      const { viewConsent } = await import('./consent.js'); // loaded only for this view
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
  // The pending list and a card page ask for their data while the session is being checked.
  const card = path === '/history' || path === '/settings' ? null : new URLSearchParams(location.search).get('card');
  let prefetched = null;
  if (!state.session && (path === '/' || path === '/confirm')) {
    prefetched = api('GET', card ? '/cards/' + encodeURIComponent(card) : '/cards');
    prefetched.catch(() => null); // a 401 here is handled when the session check answers
  }
  if (!state.session && !(await loadSession())) {
    remember.set(location.pathname + location.search);
    await viewSignin(null, true);
    return 'signin';
  }
  try {
    if (path === '/history') { await viewHistory(); return 'history'; }
    if (path === '/settings') {
      const { viewSettings } = await import('./settings.js'); // loaded only for this view
      await viewSettings({ api, el, show, announce, navigate, setSession, timeEl, session: state.session });
      return 'settings';
    }
    if (card) { await viewOneCard(card, prefetched); return 'card'; }
    await viewPending(prefetched);
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

async function render(signinToken) {
  let view = 'error';
  try {
    view = await route(signinToken);
  } catch (e) {
    show(el('h1', {}, 'Something went wrong'), el('p', { class: 'error', role: 'alert' }, e.message),
      el('p', {}, el('a', { href: location.pathname + location.search }, 'Try again')));
  }
  const first = !state.ready;
  markReady(view);
  // After an in-page navigation, move focus to the new content (as a page load would).
  if (!first) main().focus({ preventScroll: true });
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

// The sign-in token arrives in the fragment (never sent to a server, never in a Referer); read it
// once and take it out of the address bar and history before anything else happens.
function takeSigninToken() {
  if (location.pathname !== '/signin' || !location.hash) return null;
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  history.replaceState(null, '', location.pathname + location.search);
  return token || null;
}

render(takeSigninToken());
