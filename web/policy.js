// Settings, Policy (docs/policy.md, "Policy as data"): the workspace's whole policy in the server's own words
// (GET /api/policy: the sentences `countersign policy show` prints) and, for the owner, its rules changed here:
// what no standing grant may cover, quorum and escalation rules, each change a card the owner then confirms
// (the page says so and links it). A refused rule gets the API's sentence beside its field, and nothing is
// filed. Loaded only for this section (settings.js).
import { append, el } from './dom.js';
import { S } from './strings-on-demand.js';

// The sections an owner changes here: the document's list of rules, where a change is filed, the form.
const EDITORS = {
  standingGrantsNever: { rules: (p) => p.standingGrantsNever, path: '/standing-grants/rules', add: S.addNeverRule },
  quorum: { rules: (p) => p.quorum, path: '/quorum-rules', add: S.addQuorumRule },
  escalation: { rules: (p) => p.escalation, path: '/escalation-rules', add: S.addEscalationRule },
};

export async function policyPanel(page) {
  const data = await page.api('GET', '/policy');
  return el('section', { class: 'panel', 'data-section': 'policy' }, el('h2', {}, S.sections.policy[0]),
    el('p', { class: 'hint' }, S.policyIntro),
    data.canChange ? null : el('p', { class: 'muted', 'data-field': 'owner-only' }, S.policyOwnerOnly),
    data.sections.map((s) => sectionEl(page, data, s)));
}

function sectionEl(page, data, s) {
  const box = el('div', { class: 'policy-section', 'data-policy-section': s.key }, el('h3', {}, s.title));
  if (s.key === 'standingGrants') { // how many, and where they are listed (each one's words are there)
    box.append(el('p', { 'data-field': 'grant-count' }, S.policyGrantCount(data.policy.standingGrants.length), ' ',
      el('a', { href: '/settings/grants', 'data-nav': true }, S.seeGrants)));
    return box;
  }
  const editor = data.canChange && data.choices ? EDITORS[s.key] : null;
  if (s.summary && !(editor && s.ruleWords.length)) box.append(el('p', { class: 'policy-summary' }, s.summary));
  if (!editor) {
    if (s.lines.length) box.append(el('ul', { class: 'policy-lines' }, s.lines.map((line) => el('li', {}, line))));
    return box;
  }
  const rules = editor.rules(data.policy);
  const note = el('div', { class: 'policy-note', 'aria-live': 'polite', 'data-field': 'policy-note' });
  // Files every rule as it is to be: the change's card, which the page says waits, and links.
  const send = async (wanted) => {
    const answer = await page.api('POST', editor.path, { rules: wanted });
    note.replaceChildren(el('p', { class: 'notice policy-waits', 'data-field': 'waiting' }, S.changeWaitsFor,
      el('a', { href: '/confirm?card=' + encodeURIComponent(answer.id), 'data-nav': true, 'data-card-link': answer.id },
        S.openRequest)));
  };
  const failed = (e) => note.replaceChildren(el('p', { class: 'error', role: 'alert' }, e.message));
  append(box, [s.ruleWords.length ? el('ul', { class: 'policy-lines policy-rules' }, s.ruleWords.map((words, i) => {
    const remove = el('button', { type: 'button', class: 'secondary', 'data-action': 'remove-rule',
      'aria-label': S.removeRuleNamed(words) }, S.removeRule);
    remove.addEventListener('click', async () => {
      remove.disabled = true;
      note.replaceChildren();
      try { await send(rules.filter((_, j) => j !== i)); } catch (e) { failed(e); } finally { remove.disabled = false; }
    });
    return el('li', { 'data-rule': i }, el('span', {}, words), remove);
  })) : null, addForm(s.key, data.choices, editor, rules, send, note)]);
  return box;
}

// A labelled control with its refusal beside it: [row, note].
function field(id, label, control) {
  const note = el('p', { class: 'error field-error', id: id + '-error', 'aria-live': 'polite' });
  control.setAttribute('aria-describedby', id + '-error');
  return [el('div', { class: 'policy-field', 'data-field': id }, el('label', { for: id }, label), control, note), note];
}

const input = (id, value, mode) => {
  const box = el('input', { type: 'text', id, name: id, autocomplete: 'off', inputmode: mode });
  box.value = value;
  return box;
};

const select = (id, choices) => el('select', { id, name: id },
  choices.map(([value, words]) => el('option', { value }, words)));

// Checkboxes of whom a rule names (roles, then members), with the refusal beside them.
function whoSet(id, legend, choices) {
  const note = el('p', { class: 'error field-error', 'aria-live': 'polite' });
  const boxes = choices.map((c, i) => el('input', { type: 'checkbox', id: `${id}-${i}`, value: c.value }));
  const set = el('fieldset', { class: 'policy-choices', 'data-field': id }, el('legend', {}, legend),
    choices.map((c, i) => el('label', { class: 'choice', for: boxes[i].id }, boxes[i], el('span', {}, c.words))), note);
  return [set, note, () => boxes.filter((b) => b.checked).map((b) => b.value)];
}

const whole = (typed) => (/^\d+$/.test(typed.trim()) ? Number(typed.trim()) : typed.trim());

// What a rule covers: the server's choices, one tool, or an amount over a figure.
function whenRows(key, choices, withAny) {
  const id = key + '-when';
  const kinds = choices.when.filter((c) => withAny || c.value !== 'any').map((c) => [c.value, c.words]);
  const kind = select(id, [...kinds, ['tool', S.whenTool], ['over', S.whenOver]]);
  const tool = select(id + '-tool', choices.tools.map((t) => [t, t]));
  const amount = input(id + '-over', '', 'decimal');
  const [row, note] = field(id, S.ruleWhen, kind);
  const [toolRow] = field(id + '-tool', S.ruleTool, tool);
  const [overRow] = field(id + '-over', S.ruleOver, amount);
  const shown = () => { toolRow.hidden = kind.value !== 'tool'; overRow.hidden = kind.value !== 'over'; };
  kind.addEventListener('change', shown);
  shown();
  const value = () => (kind.value === 'tool' ? 'tool:' + tool.value
    : kind.value === 'over' ? 'over:' + amount.value.trim() : kind.value);
  return [[row, toolRow, overRow], note, kind, value];
}

function addForm(key, choices, editor, rules, send, sectionNote) {
  const notes = {};
  const [whenEls, whenNote, whenControl, when] = whenRows(key, choices, key !== 'standingGrantsNever');
  notes.when = [whenNote, whenControl];
  const rows = [];
  let rule;
  if (key === 'standingGrantsNever') {
    rows.push(whenEls);
    rule = () => when();
  } else {
    const name = input(key + '-name', '', 'text');
    const [nameRow, nameNote] = field(key + '-name', S.ruleName, name);
    notes.name = [nameNote, name];
    rows.push(nameRow, whenEls);
    if (key === 'quorum') {
      const needs = input(key + '-needs', '2', 'numeric');
      const [needsRow, needsNote] = field(key + '-needs', S.ruleNeeds, needs);
      const [of, ofNote, ofValue] = whoSet(key + '-of', S.ruleOf, choices.who);
      const decline = select(key + '-decline', choices.decline.map((c) => [c.value, c.words]));
      const [declineRow, declineNote] = field(key + '-decline', S.ruleDecline, decline);
      Object.assign(notes, { needs: [needsNote, needs], of: [ofNote, of], decline: [declineNote, decline] });
      rows.push(needsRow, of, declineRow);
      rule = () => ({ name: name.value.trim(), when: when(), needs: whole(needs.value), of: ofValue(),
        decline: decline.value });
    } else {
      const after = input(key + '-after', '30', 'numeric');
      const [afterRow, afterNote] = field(key + '-after', S.ruleAfter, after);
      const [add, addNote, addValue] = whoSet(key + '-add', S.ruleAdd, choices.who);
      Object.assign(notes, { after: [afterNote, after], add: [addNote, add] });
      rows.push(afterRow, add);
      rule = () => ({ name: name.value.trim(), when: when(), after: whole(after.value), add: addValue() });
    }
  }
  const formNote = el('p', { class: 'error field-error', 'aria-live': 'polite' });
  const save = el('button', { type: 'submit', class: 'primary', 'data-action': 'add-rule' }, S.askForChange);
  const form = el('form', { class: 'policy-form' }, rows, formNote, el('div', { class: 'actions' }, save));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    for (const [n, control] of Object.values(notes)) { n.textContent = ''; control.removeAttribute('aria-invalid'); }
    formNote.textContent = '';
    sectionNote.replaceChildren();
    save.disabled = true;
    try {
      await send([...rules, rule()]);
    } catch (e) {
      // rules[3].needs → beside that field (what no grant may cover: its one field); else under the form
      const part = key === 'standingGrantsNever' ? 'when' : /^rules\[\d+\]\./.test(e.field || '') && e.field.split('.').pop();
      const at = e.status === 422 ? notes[part] : null;
      if (at) {
        at[0].textContent = e.message;
        at[1].setAttribute('aria-invalid', 'true');
        (at[1].querySelector('input') || at[1]).focus();
      } else formNote.textContent = e.message;
    } finally { save.disabled = false; }
  });
  return [sectionNote, el('details', { class: 'policy-add', 'data-add': key }, el('summary', {}, editor.add), form)];
}
