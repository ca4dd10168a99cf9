// An upstream's tools on the card that adds it or approves them again (toolsets/gateway/review.py):
// changed ones first, what changed struck out or added (bracketed as well as coloured), then added,
// removed and unchanged (folded) ones; a schema is its list of arguments, folded.
import { el } from './dom.js';
import { S } from './strings-on-demand.js';

const MARKS = { '-': 'del', '+': 'ins' };

// A field's segments ([mark, text]: '' as it was, '-' removed, '+' added) as text and del/ins.
function segmentsEl(tag, attrs, segments) {
  const parts = (Array.isArray(segments) ? segments : []).map(([mark, text]) =>
    (MARKS[mark] ? el(MARKS[mark], {}, String(text)) : String(text)));
  return el(tag, Object.assign({ class: 'diff' }, attrs), el('bdi', {}, parts));
}

const hasText = (segments) => Array.isArray(segments) && segments.length > 0;

function argumentEl(arg) {
  const row = el('li', { 'data-arg': arg.name, 'data-change': arg.change || null },
    el('code', {}, arg.name), S.argumentChanges[arg.change] ? el('span', { class: 'muted' }, ' · ', S.argumentChanges[arg.change]) : null,
    ' · ', segmentsEl('span', { 'data-field': 'type' }, arg.type),
    ' · ', segmentsEl('span', { 'data-field': 'required' }, arg.required));
  if (hasText(arg.description)) row.append(segmentsEl('div', { 'data-field': 'description' }, arg.description));
  if (hasText(arg.more)) row.append(segmentsEl('div', { 'data-field': 'more' }, arg.more));
  return row;
}

function argumentsEl(tool) {
  const args = Array.isArray(tool.arguments) ? tool.arguments : [];
  const body = args.length ? el('ul', { class: 'args-list' }, args.map(argumentEl)) : el('p', {}, S.noArguments);
  return el('details', { class: 'args' }, el('summary', {}, S.argumentsCount(args.length)), body,
    hasText(tool.schema) ? segmentsEl('p', { 'data-field': 'schema' }, [['', S.schemaAlso], ...tool.schema]) : null);
}

function headEl(tool) {
  return [el('strong', {}, el('bdi', {}, tool.name)), ' — ', tool.runs,
    tool.was ? el('span', { 'data-field': 'was' }, S.was(tool.was)) : null];
}

function toolBody(tool) {
  const changed = tool.change === 'changed';
  const args = Array.isArray(tool.arguments) ? tool.arguments : [];
  const moved = changed ? args.filter((a) => a.change) : [];
  const other = changed && Array.isArray(tool.other) ? tool.other : [];
  return [
    hasText(tool.title) ? segmentsEl('p', { 'data-field': 'title' }, [['', S.toolTitle], ...tool.title]) : null,
    hasText(tool.description) ? segmentsEl('p', { 'data-field': 'description' }, tool.description)
      : el('p', { class: 'muted' }, S.noDescription),
    tool.note ? el('p', { class: 'muted' }, tool.note) : null,
    moved.length ? el('ul', { class: 'args-list', 'data-field': 'argument-changes' }, moved.map(argumentEl)) : null,
    other.length ? el('ul', { class: 'args-list', 'data-field': 'other' }, other.map((o) =>
      el('li', {}, el('code', {}, o.name), ' ', segmentsEl('span', {}, o.value)))) : null,
    argumentsEl(tool),
  ];
}

function toolEl(tool) {
  const attrs = { class: 'tool', 'data-tool': tool.name, 'data-change': tool.change };
  if (tool.change === 'unchanged') {
    return el('details', attrs, el('summary', { class: 'tool-head' }, headEl(tool)), toolBody(tool));
  }
  return el('div', attrs, el('p', { class: 'tool-head' }, headEl(tool)), toolBody(tool));
}

export function toolsEl(sections) {
  return el('div', { class: 'tools' }, sections.map((s) =>
    el('section', { class: 'tool-group', 'data-group': s.group },
      el('h3', {}, s.heading), (Array.isArray(s.tools) ? s.tools : []).map(toolEl))));
}
