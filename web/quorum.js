// A card several people approve (docs/policy.md, "Quorum"): who approved and who is still needed, and
// on the Confirm button which approval this click is ("Approve (1 of 2)"); hidden once yours counts no more.
import { el } from './dom.js';
import { S } from './strings-on-demand.js';

const names = (list) => el('bdi', {}, list.join(', '));

export function fill(place, card, article) {
  const q = card.quorum;
  const parts = q.approvedBy.length
    ? S.quorumApproved(names(q.approvedBy), q.more, q.of)
    : [S.quorumNeeds(q.needs, q.of)];
  if (q.declinedBy && q.declinedBy.length) parts.push(...S.quorumDeclined(names(q.declinedBy)));
  const confirm = article.querySelector('[data-action=confirm]');
  if (q.you === 'yes') parts.push(S.youApproved);
  else if (q.you === 'no') parts.push(S.youDeclined);
  else if (!q.youMayApprove && confirm) parts.push(S.cannotApprove);
  else if (q.addedByEscalation) parts.push(S.addedMayApprove);  // an escalation added you: say your yes counts
  place.replaceChildren(...parts);
  if (!confirm) return;
  if (q.youMayApprove) {
    confirm.textContent = (card.passkeyRequired ? S.approveNthWithPasskey : S.approveNth)(q.yourApproval, q.needs);
  } else {
    confirm.hidden = true;
    const decline = article.querySelector('[data-action=decline]');
    if (q.you && decline) decline.hidden = true;  // one person counts once: nothing more to answer
  }
}
