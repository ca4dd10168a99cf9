// One card: its lines, outcome, receipt and answers.
import { announce, append, drawLater, el, emphasised, timeEl, viewsStyle } from './dom.js';
import { S } from './strings.js';

export let api, setSession, navigate;
export function usePage(page) {
  ({ api, setSession, navigate } = page);
}

// passkeys.js: loaded once a card needs it.
let passkeys = null;
const loadPasskeys = () => passkeys || (passkeys = import('./passkeys.js'));
const passkeysAvailable = () => typeof PublicKeyCredential !== 'undefined' && !!navigator.credentials;

export function cardState(card) {
  return (card && (card.state || card.status)) || 'pending';
}

function valueText(value) {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

// "before → after", each half isolated: right-to-left text would turn "100 → 900" around.
function lineParts(text) {
  const halves = text.split(' → ');
  return halves.flatMap((half, i) => (i ? [' → ', el('bdi', {}, half)] : [el('bdi', {}, half)]));
}

// What the agent is told, as told.
function resultEl(result) {
  if (result === null || result === undefined) return null;
  const shown = (v) => (v !== null && typeof v === 'object' ? JSON.stringify(v, null, 2) : valueText(v));
  if (typeof result !== 'object' || Array.isArray(result)) return el('p', { class: 'result' }, shown(result));
  const entries = Object.entries(result).slice(0, 30);
  if (!entries.length) return null;
  return el('dl', { class: 'result' }, entries.map(([k, v]) => [el('dt', {}, k), el('dd', {}, shown(v))]));
}

function nextEl(next) {
  if (!Array.isArray(next) || !next.length) return null;
  return el('div', { class: 'next' },
    el('p', { class: 'label' }, S.nextSteps),
    el('ul', {}, next.slice(0, 10).map((s) => el('li', {}, s && s.description ? s.description : valueText(s)))));
}

function outcomeLinesEl(card) {
  const lines = Array.isArray(card.outcome) ? card.outcome : [];
  return lines.map((line) => el('p', { class: 'outcome-line' }, valueText(line)));
}

function agentToldEl(card) {
  const result = resultEl(card.result);
  const next = nextEl(card.next);
  if (!result && !next) return null;
  return el('details', { class: 'agent-told' }, el('summary', {}, S.agentTold), result, next);
}

// A card's final state, or why a click was refused.
function outcomeEl(card, refusal) {
  const st = cardState(card);
  // Refused at the click because its data moved: stored as declined, refusal: changed.
  const changed = !refusal && st === 'declined' && card && card.refusal === 'changed';
  if (changed) refusal = { code: 'changed', message: card.reason };
  // Lapsed, and the workspace counts that as a no (a lifetime rule): said so, with the agent's sentence.
  const lapsed = !refusal && st === 'expired' && card && card.lapse === 'declined';
  const key = refusal ? refusal.code || 'error' : lapsed ? 'lapsed-declined' : st;
  const good = !refusal && st === 'completed';
  const box = el('div', { class: 'outcome ' + (good ? 'ok' : (st === 'pending' && !refusal ? 'info' : 'warn')), 'data-outcome': key });
  const headline = refusal ? (S.refusals[refusal.code] || S.refused) : lapsed ? S.lapsedDeclined : (S.outcomes[st] || st);
  box.append(el('p', { class: 'headline' }, headline));
  if (refusal && refusal.message) box.append(el('p', {}, refusal.message));
  if (card && !refusal && (st === 'declined' || lapsed) && card.reason) box.append(el('p', {}, S.reason, card.reason));
  if (refusal && card && (key === 'already_answered' || key === 'being_confirmed')) {
    box.append(el('p', { class: 'muted' }, S.now, S.outcomes[st] || st));
    if (st === 'declined' && card.reason) box.append(el('p', {}, S.reason, card.reason));
  }
  if (card && st === 'completed') append(box, outcomeLinesEl(card));
  if (card && st === 'failed') {
    const err = card.result && typeof card.result === 'object' && card.result.error ? card.result.error : card.reason;
    if (Array.isArray(card.outcome) && card.outcome.length) append(box, outcomeLinesEl(card));
    else if (err) box.append(el('p', { class: 'outcome-line' }, valueText(err)));
  }
  if (card && !refusal && card.signedWith && ['completed', 'failed', 'running'].includes(st)) {
    box.append(el('p', { class: 'signed-with', 'data-signed-with': true }, card.signedWith));
  }
  if (card && st === 'completed') append(box, [agentToldEl(card)]);
  return box;
}

export function cardEl(card, opts) {
  opts = opts || {};
  const st = cardState(card);
  const article = el('article', { class: 'card', 'data-card-id': card.id, 'data-state': st });
  const titleId = 'card-title-' + card.id;
  article.setAttribute('aria-labelledby', titleId);
  article.append(el(opts.heading || 'h2', { class: 'title', id: titleId }, emphasised(card.title || card.tool || S.request)));
  if (card.irreversible) article.append(undoBadgeEl());
  const lines = Array.isArray(card.lines) ? card.lines : [];
  if (lines.length) article.append(el('ul', { class: 'lines' }, lines.map((l) => el('li', {}, lineParts(valueText(l))))));
  if (Array.isArray(card.sections) && card.sections.length) article.append(toolsEl(card.sections));
  const meta = el('p', { class: 'meta' });
  meta.append(...askedByParts(card));
  const asked = timeEl(card.createdAt);
  if (asked) meta.append(' · ', asked);
  if (st === 'pending') {
    const exp = timeEl(card.expiresAt, S.expires);
    if (exp) meta.append(el('span', { class: 'expires' }, ' · ', exp));
  }
  article.append(meta);
  if (card.quorum) article.append(quorumEl(card, article));
  const outcome = el('div', { class: 'outcome-slot', 'aria-live': 'polite' });
  article.append(outcome);
  if (st === 'pending' && opts.answerable !== false) article.append(actionsEl(card, article, outcome, opts));
  else outcome.append(outcomeEl(card, null));
  if (hasReceipt(card)) article.append(receiptEl(card));
  if (card.more) drawLater(import('./edit.js').then((m) => m.more(article, card, opts, { api, navigate, cardEl })));
  if (opts.reopenable && st === 'declined' && !card.refusal) article.append(reopenEl(card, outcome));
  return article;
}

function quorumEl(card, article) {
  const p = el('p', { class: 'meta', 'data-quorum': true });
  drawLater(import('./quorum.js').then((q) => q.fill(p, card, article)));
  return p;
}

// An upstream's tools (tools.js, loaded for a card that has them).
function toolsEl(sections) {
  const place = el('div', { class: 'tools' });
  drawLater(Promise.all([import('./tools.js'), viewsStyle()])
    .then(([tools]) => place.replaceWith(tools.toolsEl(sections))));
  return place;
}

// Who asked, as the card email says (core/askers.py).
function askedByParts(card) {
  const by = card.askedBy || { kind: 'agent', name: card.connectionName };
  if (by.kind === 'person') {
    return S.fromSettings(el('strong', {}, by.you ? S.you : el('bdi', {}, by.name || S.aMember)));
  }
  if (by.kind === 'cli') return S.fromCommandLine(el('strong', {}, S.anOwner));
  return S.askedBy(el('strong', {}, el('bdi', {}, by.name || S.anAgent)));
}

function undoBadgeEl() {
  return el('p', { class: 'badge-irreversible', 'data-badge': 'irreversible' }, S.cannotBeUndone);
}

const hasReceipt = (card) => cardState(card) === 'completed'
  || (card.passkeySigned && ['running', 'failed'].includes(cardState(card)));

function receiptEl(card) {
  const label = card.passkeySigned ? S.receiptPasskey : S.receiptWorkspace;
  return el('p', { class: 'receipt' }, el('a', { href: `/api/cards/${encodeURIComponent(card.id)}/receipt`,
    download: `countersign-receipt-${card.id}.json`, 'data-action': 'receipt' }, label));
}

function reopenEl(card, outcome) {
  const btn = el('button', { type: 'button', class: 'secondary', 'data-action': 'reopen' }, S.askAgain);
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
    card.passkeyRequired ? S.confirmWithPasskey : S.confirm);
  const declineBtn = el('button', { type: 'button', class: 'secondary', 'data-action': 'decline' }, S.decline);
  const row = el('div', { class: 'actions' }, confirmBtn, declineBtn);
  const reasonId = 'reason-' + card.id;
  const reason = el('textarea', { id: reasonId, name: 'reason', rows: 2, maxlength: 500, autocomplete: 'off' });
  const sendDecline = el('button', { type: 'submit', class: 'danger', 'data-action': 'send-decline' }, S.decline);
  const keep = el('button', { type: 'button', class: 'secondary', 'data-action': 'keep' }, S.keepIt);
  const form = el('form', { class: 'decline', hidden: true },
    el('label', { for: reasonId }, S.declineReason), reason,
    el('div', { class: 'actions' }, sendDecline, keep));
  const wrap = el('div', { class: 'answer' }, row, form);
  const all = [confirmBtn, declineBtn, sendDecline, keep, reason];

  const busy = (on) => all.forEach((b) => { b.disabled = on; });
  const finish = (view, refusal) => {
    if (!refusal && view && view.quorum && view.state === 'pending') return article.replaceWith(cardEl(view, opts));
    wrap.remove();
    article.dataset.state = view ? cardState(view) : 'refused';
    const box = outcomeEl(view, refusal);
    if (refusal && refusal.code === 'signed_out') {
      box.append(el('p', {}, el('a', { href: '/signin', 'data-nav': true }, S.signInAgain)));
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
        finish(e.card, { code, message: e.status === 401 ? S.signInAgainToAnswer : e.message });
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
    ? answerWith(async () => (await loadPasskeys()).confirmWithPasskey(api, card.id), S.waitingForPasskey, confirmBtn)
    : answer('confirm', undefined, S.confirming, confirmBtn)));
  if (card.passkeyRequired) {
    setTimeout(loadPasskeys);
    wrap.prepend(el('p', { class: 'muted', 'data-passkey-note': true },
      passkeysAvailable() ? S.passkeyNeeded : S.passkeyUnavailable));
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
    answer('decline', text ? { reason: text } : {}, S.declining, sendDecline);
  });
  return wrap;
}
