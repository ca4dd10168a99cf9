// Settings → Notifications, beside email: which other channels reach the person (Slack, push; email
// is "Email me when an agent asks"), and a test button per channel. Loaded with that section only.
import { S } from './strings-on-demand.js';

// A test button: the answer's sentence (or the refusal's); when asked too often, waits Retry-After.
export function testButtonEl({ api, el }, path, label, name) {
  const button = el('button', { type: 'button', class: 'secondary', [`data-test-${name}`]: true }, label);
  const answer = el('p', { class: `test-${name}-answer`, 'aria-live': 'polite' });
  button.addEventListener('click', async () => {
    button.disabled = true;
    answer.textContent = S.sending;
    let wait = 0;
    try {
      answer.textContent = (await api('POST', path)).message;
    } catch (e) {
      answer.textContent = e.message;
      if (e.status === 429) wait = e.retryAfter || 60;
    } finally {
      if (wait) setTimeout(() => { button.disabled = false; }, wait * 1000);
      else button.disabled = false;
    }
  });
  return el('div', { class: `test-${name}` }, el('div', { class: 'actions' }, button), answer);
}

export function channelsEl(page, me, toggleEl) {
  const { api, el } = page;
  const channels = me.channels || {};
  const choose = (name) => (v) => api('PATCH', '/settings/me', { channels: { [name]: v } });
  return el('div', { class: 'channels', 'data-channels': true },
    el('h2', {}, S.otherChannels),
    el('p', { class: 'hint' }, S.channelsHint),
    toggleEl(el, 'channel_slack', S.slackWhenAsked, channels.slack !== false, S.slackWhenAskedHint, choose('slack')),
    testButtonEl(page, '/settings/slack/test', S.sendTestSlack, 'slack'),
    toggleEl(el, 'channel_push', S.pushWhenAsked, channels.push !== false, S.pushWhenAskedHint, choose('push')));
}
