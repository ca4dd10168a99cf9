// Settings → Notifications, push to this device (docs/channels.md, "Push to your phone"). Loaded on
// demand by settings.js. Turning it on asks the browser's permission, subscribes the service worker
// (sw.js) with the server's key and hands the subscription to the API; the devices that get
// notifications are listed, each removable.
import { dateText } from './dom.js';
import { S } from './strings-on-demand.js';

const PUSH = '/settings/push';

export async function pushPanel(page, holder) {
  const { el } = page;
  const heading = [el('h2', {}, S.push), el('p', { class: 'hint' }, S.pushHint)];
  if (!('serviceWorker' in navigator) || !('PushManager' in window) || !('Notification' in window)) {
    holder.replaceChildren(...heading, el('p', { class: 'muted', 'data-push-unsupported': true }, S.pushUnsupported));
    return;
  }
  const shown = await page.api('GET', PUSH);
  const answer = el('p', { class: 'push-answer', 'aria-live': 'polite' });
  const button = el('button', { type: 'button', class: 'secondary', 'data-push-enable': true }, S.pushTurnOn);
  button.addEventListener('click', async () => {
    button.disabled = true;
    answer.textContent = S.pushTurningOn;
    try {
      if (await Notification.requestPermission() !== 'granted') {
        answer.textContent = S.pushDenied;
        return;
      }
      await navigator.serviceWorker.register('/sw.js');
      const registration = await navigator.serviceWorker.ready;
      const subscription = await registration.pushManager.subscribe({
        userVisibleOnly: true, applicationServerKey: shown.applicationServerKey });
      await page.api('POST', PUSH + '/subscriptions', subscription.toJSON());
      await pushPanel(page, holder);
      holder.querySelector('.push-answer').textContent = S.pushOn;
    } catch (e) {
      answer.textContent = e.message;
    } finally { button.disabled = false; }
  });
  holder.replaceChildren(...heading, el('div', { class: 'actions' }, button), answer,
    el('p', { class: 'push-devices-title' }, el('strong', {}, S.pushDevices)), devicesEl(page, holder, shown.devices || []));
}

// This device's push subscription, if the page's service worker has one, else null. Signing out
// names it (the server drops it with the session) and then unsubscribes it here too.
export async function thisDevicesSubscription() {
  if (!('serviceWorker' in navigator) || !('PushManager' in window)) return null;
  try {
    const registration = await navigator.serviceWorker.getRegistration();
    return registration ? await registration.pushManager.getSubscription() : null;
  } catch (e) {
    return null;
  }
}

// This device is signed in: app.js calls it after signing in and whenever the page loads signed
// in where notifications are allowed. If the service worker has a subscription, the server is told
// (only one of this person's own devices is changed), so its notifications show the card, its title
// and who asked, until this session ends; past it they say only that a request waits. Nothing to
// renew (no subscription, another person's device, signed out) is not an error.
export async function renewThisDevice(api) {
  const subscription = await thisDevicesSubscription();
  if (!subscription) return false;
  try {
    await api('POST', PUSH + '/renew', { endpoint: subscription.endpoint });
    return true;
  } catch (e) {
    return false;
  }
}

function devicesEl(page, holder, devices) {
  const { el } = page;
  if (!devices.length) return el('p', { class: 'muted', 'data-push-devices': true }, S.pushNoDevices);
  const when = (iso) => el('time', { datetime: iso }, dateText(iso));
  return el('ul', { class: 'push-devices', 'data-push-devices': true }, devices.map((d) => {
    const remove = el('button', { type: 'button', class: 'secondary', 'data-push-remove': d.id }, S.pushRemove);
    remove.addEventListener('click', async () => {
      remove.disabled = true;
      try {
        await page.api('DELETE', PUSH + '/subscriptions/' + encodeURIComponent(d.id));
        await pushPanel(page, holder);
        holder.querySelector('.push-answer').textContent = S.pushRemoved;
      } catch (e) {
        remove.disabled = false;
        holder.querySelector('.push-answer').textContent = e.message;
      }
    });
    return el('li', { 'data-push-device': d.id }, el('strong', {}, d.device), ' · ',
      ...[].concat(S.pushAdded(when(d.createdAt))), ' · ',
      ...(d.lastUsedAt ? [].concat(S.pushLastUsed(when(d.lastUsedAt))) : [S.pushNeverUsed]), ' ',
      testButton(page, holder, d), ' ', remove);
  }));
}

// "Send a test" beside a device: a test notification to it through the server's push path (the
// server's own sentence says what happened; a device its push service no longer knows is removed).
function testButton(page, holder, device) {
  const { el } = page;
  const button = el('button', { type: 'button', class: 'secondary', 'data-push-test': device.id }, S.pushTest);
  button.addEventListener('click', async () => {
    button.disabled = true;
    const answer = holder.querySelector('.push-answer');
    answer.textContent = S.pushTesting;
    try {
      const sent = await page.api('POST', PUSH + '/subscriptions/' + encodeURIComponent(device.id) + '/test');
      answer.textContent = sent.message;
    } catch (e) {
      answer.textContent = e.message;
      if (e.code === 'device_gone') {
        await pushPanel(page, holder);
        holder.querySelector('.push-answer').textContent = e.message;
        return;
      }
    } finally { button.disabled = false; }
  });
  return button;
}
