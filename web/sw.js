// countersign's service worker: the page installable and readable offline (docs/security.md).
//
// - The page's files (the shell) are fetched from the network first, as without a worker, and kept
//   in a versioned cache; without a network the kept copy answers. Bump VERSION when the list of
//   files changes: the new worker fills its own cache and removes the older ones.
// - Of the API it keeps exactly one answer: the first page of the waiting list (GET /api/cards),
//   which carries no token. Without a network that copy answers, marked with the time it was saved
//   (X-Countersign-Saved-At), and the page shows it as stale, with nothing to press. A 401 or a
//   sign-out removes it. Every other API request (the session and its CSRF token, answers, cards,
//   history, settings) passes through untouched and is never stored.
// - Push (docs/channels.md, "Push to your phone"): a card filed for the person shows as a
//   notification (its title, who asked); tapping it opens the card. Where the server says a click
//   may answer it (no passkey needed), Confirm and Decline send that answer to the API with the
//   session cookie and its CSRF token, exactly as the page does: the server decides again, and a
//   refusal (signed out, not theirs, a passkey needed now) opens the card instead. It says the
//   answer came from a notification (X-Countersign-Via: push), a label for the audit trail only.
//   The buttons' words come in the push message (the server's strings), so this file has none.
//   A message of no one card (the one push for the cards held while quiet hours ran, or Settings'
//   test notification) shows its title and body, no buttons, and a tap opens a path of this origin.
//   To a device whose page session ended the server sends only that a request waits (`signIn`):
//   shown with no buttons, all such under one tag (the latest replaces the one before), and a tap
//   opens the page, which asks to sign in.
const VERSION = 'v2';
const SHELL = 'countersign-shell-' + VERSION;
const LAST_LIST = 'countersign-last-list';
const LIST_URL = '/api/cards';
const SAVED_AT = 'X-Countersign-Saved-At';
const PAGE_ROUTES = ['/', '/confirm', '/history', '/settings', '/signin'];
const SHELL_FILES = ['/', '/app.css', '/views.css', '/app.js', '/dom.js', '/cards.js', '/strings.js', '/passkeys.js',
  '/manifest.webmanifest', '/icon-192.png', '/icon-512.png', '/icon-maskable-512.png'];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(SHELL).then((cache) => cache.addAll(SHELL_FILES)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith('countersign-shell-') && name !== SHELL) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.method === 'POST' && (url.pathname === '/api/signout' || url.pathname.startsWith('/api/signin/'))) {
    event.respondWith(forgetListAfter(fetch(request)));
    return;
  }
  if (request.method !== 'GET') return;
  if (url.pathname === LIST_URL && !url.search) {
    event.respondWith(waitingList(request));
  } else if (request.mode === 'navigate' && PAGE_ROUTES.includes(url.pathname)) {
    event.respondWith(shellFile(fetch(request), '/'));
  } else if (SHELL_FILES.includes(url.pathname) || url.pathname.endsWith('.js')) {
    event.respondWith(shellFile(fetch(request), url.pathname));
  }
});

// The network's answer, kept under `key`; the kept copy when there is no network.
async function shellFile(answer, key) {
  try {
    const response = await answer;
    if (response.ok && response.type === 'basic') {
      const copy = response.clone();
      caches.open(SHELL).then((cache) => cache.put(key, copy)).catch(() => null);
    }
    return response;
  } catch (e) {
    const kept = await caches.match(key, { cacheName: SHELL });
    if (kept) return kept;
    throw e;
  }
}

async function waitingList(request) {
  let response;
  try {
    response = await fetch(request);
  } catch (e) {
    const kept = await caches.match(LIST_URL, { cacheName: LAST_LIST });
    if (kept) return kept;
    throw e;
  }
  if (response.ok) {
    const headers = new Headers(response.headers);
    headers.set(SAVED_AT, new Date().toISOString());
    headers.delete('Content-Encoding'); // the body kept is the decoded one
    headers.delete('Content-Length');
    const copy = new Response(await response.clone().blob(), { status: response.status, headers });
    await caches.open(LAST_LIST).then((cache) => cache.put(LIST_URL, copy)).catch(() => null);
  } else if (response.status === 401) {
    await caches.delete(LAST_LIST);
  }
  return response;
}

// Signing out, or in as someone else, leaves no list of the one before on this device.
async function forgetListAfter(answer) {
  const response = await answer;
  await caches.delete(LAST_LIST);
  return response;
}

// -- push ---------------------------------------------------------------------------------------
const ANSWERS = ['confirm', 'decline'];
const VIA_HEADER = 'X-Countersign-Via'; // the audit trail records a button's answer as from a notification

// The buttons, worded as the message says (the server's strings: this worker holds no words of its
// own). A message without both words shows none: a tap still opens the card.
function answerButtons(labels) {
  if (!labels || !ANSWERS.every((a) => typeof labels[a] === 'string' && labels[a])) return [];
  return ANSWERS.map((action) => ({ action, title: labels[action] }));
}

self.addEventListener('push', (event) => {
  let card = null;
  try { card = event.data ? event.data.json() : null; } catch (e) { card = null; }
  if (card && typeof card.card !== 'string' && typeof card.title === 'string') {
    event.waitUntil(showNotice(card));
    return;
  }
  if (!card || typeof card.card !== 'string') return;
  const data = { card: card.card, url: cardPath(card.card), answerable: card.answerable === true };
  event.waitUntil(self.registration.showNotification(String(card.title || ''), {
    body: String(card.body || ''), tag: 'card-' + card.card, data,
    actions: data.answerable ? answerButtons(card.labels) : [],
  }));
});

// A message of no one card: the one push for the cards held while quiet hours ran ("3 requests
// are waiting", opening the list), Settings' test notification (opening Settings), or, to a device
// signed out, that a request waits (opening the page to sign in). Its tap opens a path of this
// origin only; no buttons.
function showNotice(notice) {
  const kind = notice.test === true ? 'test' : notice.signIn === true ? 'sign-in' : 'waiting';
  return self.registration.showNotification(notice.title, {
    body: String(notice.body || ''), tag: kind, data: { open: ownPath(notice.url, kind) }, actions: [],
  });
}

function ownPath(url, kind) {
  const fallback = kind === 'test' ? '/settings/notifications' : '/confirm';
  if (typeof url !== 'string' || !url.startsWith('/') || url.startsWith('//')) return fallback;
  const parsed = new URL(url, self.location.origin);
  return parsed.origin === self.location.origin ? parsed.pathname + parsed.search : fallback;
}

self.addEventListener('notificationclick', (event) => {
  const { action, notification } = event;
  notification.close();
  const done = self.handleAction(action, notification.data || {});
  try { event.waitUntil(done); } catch (e) { /* a script-made event (tests) cannot wait */ }
});

// The page's own address of a card (never a URL from the message: it opens only this origin).
function cardPath(id) {
  return '/confirm?card=' + encodeURIComponent(id);
}

// A notification's button (or a tap: no action): Confirm / Decline answer through the API as the
// page would; anything else, or any refusal, opens the card.
self.handleAction = async (action, data) => {
  if (data && typeof data.open === 'string' && typeof data.card !== 'string') return openPath(data.open);
  if (!data || typeof data.card !== 'string') return null;
  if ((action !== 'confirm' && action !== 'decline') || !data.answerable) return openCard(data.card);
  try {
    const session = await fetch('/api/session', { credentials: 'same-origin', cache: 'no-store' });
    if (!session.ok) return openCard(data.card);
    const { csrfToken } = await session.json();
    const answer = await fetch('/api/cards/' + encodeURIComponent(data.card) + '/' + action, {
      method: 'POST', credentials: 'same-origin', cache: 'no-store',
      headers: { Accept: 'application/json', 'X-CSRF-Token': csrfToken || '', [VIA_HEADER]: 'push' },
    });
    if (!answer.ok) return openCard(data.card);
    return answer.status;
  } catch (e) {
    return openCard(data.card);
  }
};

// The push service replaced this device's subscription (or expired it): subscribe again with the
// server's key and hand the new one to the API with the session, as Settings does, and remove the
// old one. Without a session nothing is sent: the old subscription is dropped by the server when
// its push service answers 404 or 410.
self.addEventListener('pushsubscriptionchange', (event) => {
  const done = self.renewSubscription(event.oldSubscription || null, event.newSubscription || null);
  try { event.waitUntil(done); } catch (e) { /* a script-made event (tests) cannot wait */ }
});

self.renewSubscription = async (old, renewed) => {
  const asked = { credentials: 'same-origin', cache: 'no-store' };
  try {
    const session = await fetch('/api/session', asked);
    if (!session.ok) return null;
    const { csrfToken } = await session.json();
    const headers = { Accept: 'application/json', 'Content-Type': 'application/json', 'X-CSRF-Token': csrfToken || '' };
    let subscription = renewed;
    if (!subscription) {
      const shown = await fetch('/api/settings/push', asked);
      if (!shown.ok) return null;
      const { applicationServerKey } = await shown.json();
      subscription = await self.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey });
    }
    const added = await fetch('/api/settings/push/subscriptions', {
      ...asked, method: 'POST', headers, body: JSON.stringify(subscription.toJSON()) });
    if (added.ok && old && old.endpoint && old.endpoint !== subscription.endpoint) {
      await fetch('/api/settings/push/subscriptions/' + await subscriptionId(old.endpoint), {
        ...asked, method: 'DELETE', headers });
    }
    return added.status;
  } catch (e) {
    return null;
  }
};

// The server's id of the subscription at `endpoint` (store/push_subscriptions.py: subscription_id).
async function subscriptionId(endpoint) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(endpoint)));
  return 'ps_' + Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('').slice(0, 24);
}

async function openCard(id) {
  return openPath(cardPath(id));
}

async function openPath(path) {
  const url = new URL(path, self.location.origin).href;
  for (const client of await self.clients.matchAll({ type: 'window', includeUncontrolled: true })) {
    if ('navigate' in client && new URL(client.url).origin === self.location.origin) {
      await client.focus().catch(() => null);
      return client.navigate(url).catch(() => null);
    }
  }
  return self.clients.openWindow ? self.clients.openWindow(url).catch(() => null) : null;
}
