// The sign-in view's texts in English (signin.js), with the first views' (strings.js): loaded
// with it, so the waiting list does not carry them.
import { S as firstViews } from './strings.js';

export const S = {
  ...firstViews,
  signIn: 'Sign in',
  signingIn: 'Signing in…',
  signInToConnect: 'Sign in to connect an agent',
  signInToAnswer: 'Sign in to answer requests',
  signInIntro: 'We email you a link that signs you in. No password.',
  yourEmail: 'Your email',
  emailMeALink: 'Email me a sign-in link',
  checkEmail: 'Check your email',
  linkOnItsWay: 'If that address belongs to a member, a sign-in link is on its way.',
  linkWorksOnce: 'The link works once, for 15 minutes. Open it on this device.',
  tooManySignins: 'Too many sign-in requests. Wait a few minutes and try again.',
  badSigninLink: 'This sign-in link is invalid, expired or already used. Ask for a new one below.',
  pressToSignIn: 'Press the button to finish signing in on this device.',
  linkSwapsAccount: (email) => ['You are signed in as ', email, '. This link signs this browser in as whoever it '
    + 'was sent to instead. If you did not just ask for it, close this page.'],
  signedInAs: (email) => ['You are signed in as ', email, '. '],
};
