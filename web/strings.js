// The first views' texts in English (the others: strings-on-demand.js). A translation is a file
// like each, same keys, chosen below. A sentence around an element returns its parts.

const en = {
  app: 'countersign',
  nav: { confirm: 'Waiting', history: 'History', settings: 'Settings' },
  unreachable: 'Could not reach the server. Check your connection and try again.',
  answered: (status) => `The server answered ${status}.`,
  loadMoreFailed: (why) => 'Could not load more. ' + (why ? why + ' ' : '') + 'Try again.',
  expires: (when) => ['expires ', when],
  created: (when) => ['created ', when],
  lastUsed: (when) => ['last used ', when],
  never: 'never',
  neverUsed: 'never used',
  earlier: 'earlier',
  // the lists
  waitingTitle: 'Waiting for you',
  waitingCount: (n) => n === 0 ? 'Nothing is waiting for you.'
    : n === 1 ? '1 request is waiting for you.' : `${count(n)} requests are waiting for you.`,
  tabTitle: (n) => `(${count(n)}) countersign`,
  showMore: 'Show more',
  request: 'Request',
  noSuchCard: 'This request does not exist, or it is not yours to answer.',
  seeAllWaiting: 'See everything waiting for you',
  history: 'History',
  historyIntro: 'Requests you answered, and what became of them.',
  historyEmpty: 'Nothing answered yet.',
  wentWrong: 'Something went wrong',
  seeWhatWaits: 'See what waits for you',
  tryAgain: 'Try again',
  offline: (when) => ['Offline — last updated ', when, "; you can't answer until you're back online."],
  // passkeys
  passkeySignin: 'Sign in with a passkey',
  passkeySigninUnavailable: 'This browser cannot use passkeys: use the email link.',
  passkeyCancelled: 'The passkey was not used (cancelled, timed out or not recognised). Try again, or use another passkey.',
  passkeyUnavailable: 'This browser cannot use passkeys. Add one from a device that can (a phone or a computer '
    + 'with a screen lock), or ask the workspace owner.',
  passkeyAlreadyHere: 'This device already holds one of your passkeys.',
  // a card
  refusals: {
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
  },
  refused: 'That did not work',
  outcomes: {
    completed: 'Confirmed — it ran',
    failed: 'Confirmed — but it failed',
    declined: 'Declined',
    withdrawn: 'Withdrawn by the agent — nothing ran',
    expired: 'Expired — nothing ran',
    running: 'Being confirmed…',
    pending: 'Waiting for your answer',
  },
  lapsedDeclined: 'Declined — no answer in time',
  reason: 'Reason: ',
  now: 'Now: ',
  askedBy: (name) => ['Asked by ', name],
  anAgent: 'an agent',
  fromSettings: (who) => [who, ', from Settings'],
  you: 'You',
  aMember: 'A member',
  fromCommandLine: (who) => [who, ', from the command line'],
  anOwner: 'An owner',
  cannotBeUndone: "Can't be undone",
  receiptPasskey: 'Download the receipt — proof, signed by this workspace and by your passkey, that you confirmed exactly this',
  receiptWorkspace: 'Download the receipt — a record, signed by this workspace, of exactly what was confirmed',
  askAgain: 'Ask me again',
  confirm: 'Confirm',
  confirmWithPasskey: 'Confirm with passkey',
  confirming: 'Confirming…',
  waitingForPasskey: 'Waiting for your passkey…',
  passkeyNeeded: 'This workspace asks for your passkey to confirm this request.',
  decline: 'Decline',
  declining: 'Declining…',
  keepIt: 'Keep it',
  declineReason: 'Reason (optional, the agent sees it)',
  signInAgain: 'Sign in again',
  signInAgainToAnswer: 'Sign in again to answer this request.',
  agentTold: 'What the agent is told',
  nextSteps: 'Next steps suggested to the agent',
};

// The first of the person's languages with a file (English only so far).
export const S = en;
export const LANG = 'en';
// Dates and numbers: the person's locales of the page's language (en-GB dates for en-GB), else it.
const mine = (navigator.languages || [navigator.language]).filter((l) => l && l.split('-')[0] === LANG);
export const LOCALES = mine.length ? mine : [LANG];

// "1,250" as the person writes it (below 1,000 English needs no formatter).
let numbers;
export const count = (n) => (n < 1000 ? String(n)
  : (numbers || (numbers = new Intl.NumberFormat(LOCALES))).format(n));
