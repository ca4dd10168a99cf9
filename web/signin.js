// Signing in (web/ in docs/README.md): the email-link form, finishing a link's sign-in, and
// passkeys' sign-in beside them. Loaded when a view needs it, so the waiting list's first view
// does not carry it; ``app`` is what it uses of app.js (api, session, where to go next).
import { el, show } from './dom.js';
import { S } from './strings-signin.js';

function signinForm(app, heading, intro) {
  const email = el('input', { type: 'email', id: 'email', name: 'email', required: true,
    autocomplete: 'username webauthn',
    inputmode: 'email', maxlength: 254 });
  const submit = el('button', { type: 'submit', class: 'primary' }, S.emailMeALink);
  const note = el('div', { 'aria-live': 'polite' });
  const form = el('form', { class: 'signin' }, el('label', { for: 'email' }, S.yourEmail), email, submit, note);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    submit.disabled = true;
    note.replaceChildren();
    try {
      const answer = await app.api('POST', '/signin/request', { email: email.value.trim() });
      form.replaceChildren(el('div', { class: 'outcome ok', 'data-outcome': 'sent' },
        el('p', { class: 'headline' }, S.checkEmail),
        el('p', {}, (answer && answer.message) || S.linkOnItsWay),
        el('p', { class: 'muted' }, S.linkWorksOnce)));
    } catch (e) {
      const msg = e.status === 429 ? S.tooManySignins : e.message;
      note.append(el('p', { class: 'error', role: 'alert' }, msg));
      submit.disabled = false;
    }
  });
  const withPasskey = el('div', { class: 'passkey-signin' });
  import('./passkeys.js').then((passkeys) => withPasskey.append(...passkeys.signinWithPasskey(app.api, (session) => {
    app.setSession(session);
    const next = app.safeNext(app.remember.get());
    app.remember.clear();
    app.navigate(next, true);
  })));
  return [el('h1', {}, heading), intro ? el('p', {}, intro) : null, form, withPasskey];
}

export async function viewSignin(app, token, reason) {
  if (token) {
    const btn = el('button', { type: 'button', class: 'primary wide', 'data-action': 'signin' }, S.signIn);
    const note = el('div', { 'aria-live': 'polite' });
    btn.addEventListener('click', async () => {
      btn.disabled = true;
      btn.textContent = S.signingIn;
      try {
        app.setSession(await app.api('POST', '/signin/complete', { token }));
        const next = app.safeNext(app.remember.get());
        app.remember.clear();
        app.navigate(next, true);
      } catch (e) {
        btn.remove();
        const msg = e.status === 400 ? S.badSigninLink : e.message;
        show(el('p', { class: 'error', role: 'alert', 'data-outcome': e.code || 'error' }, msg),
          signinForm(app, S.signIn, null));
        note.textContent = '';
      }
    });
    // Already signed in here: a link someone else sent would swap this browser to their account.
    const swap = app.state.session && el('p', { class: 'error', role: 'alert' },
      S.linkSwapsAccount(el('strong', {}, app.state.session.person.email)));
    show(el('h1', {}, S.signIn), swap, el('p', {}, S.pressToSignIn), btn, note);
    return;
  }
  const parts = signinForm(app, reason === 'consent' ? S.signInToConnect : reason ? S.signInToAnswer : S.signIn,
    S.signInIntro);
  if (app.state.session) {
    parts.push(el('p', { class: 'muted' }, S.signedInAs(el('strong', {}, app.state.session.person.email)),
      el('a', { href: '/confirm', 'data-nav': true }, S.seeWhatWaits)));
  }
  show(parts);
}
