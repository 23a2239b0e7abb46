import assert from 'node:assert/strict';
import { test } from 'node:test';

import { StatusModel } from '../src/status';

test('a stopped server shows as such and clicks open the log', () => {
  const view = new StatusModel().view();
  assert.match(view.text, /circle-slash/);
  assert.equal(view.command, 'citelsp.showOutput');
});

test('P0 and P1 count references once, across citations and entries', () => {
  const model = new StatusModel();
  model.setRunning(true);
  model.setFindings('file:///paper.md', [
    { level: 'error', message: 'smith2023: the DOI does not exist' },
    { level: 'error', message: 'smith2023: the DOI does not exist' },
    { level: 'warning', message: 'bran2024: no index has this work' },
    { level: 'other', message: 'bell2021: could not be checked' },
    { level: 'error', message: "'missing' is in no bibliography" },
  ]);
  model.setFindings('file:///refs.bib', [
    { level: 'error', message: 'smith2023: the DOI does not exist' },
    { level: 'warning', message: 'smith2023: year differs' },
  ]);
  assert.deepEqual(model.counts(), { p0: 2, p1: 1 });
  const view = model.view();
  assert.equal(view.text, '$(error) citelsp P0 2  P1 1');
  assert.equal(view.command, 'citelsp.showChecklist');

  model.setFindings('file:///paper.md', []);
  model.setFindings('file:///refs.bib', []);
  assert.equal(model.view().text, '$(check) citelsp P0 0  P1 0');
});

test('progress shows while verification runs', () => {
  const model = new StatusModel();
  model.setRunning(true);
  model.setProgress('Verifying references 12/140');
  assert.equal(model.view().text, '$(sync~spin) citelsp 12/140 P0 0  P1 0');
  assert.match(model.view().tooltip, /Verifying references 12\/140/);
  model.endProgress();
  assert.doesNotMatch(model.view().text, /sync/);
  model.setProgress('Verifying references 1/2');
  model.setRunning(false);
  model.setRunning(true);
  assert.doesNotMatch(model.view().text, /sync/);
});

test('the server notice shows after the counts until it is cleared or the server stops', () => {
  const model = new StatusModel();
  model.setRunning(true);
  model.setNotice('offline — 4 references not checked');
  assert.equal(model.view().text, '$(check) citelsp P0 0  P1 0 · offline — 4 references not checked');
  assert.match(model.view().tooltip, /^offline — 4 references not checked\n/);
  model.setNotice('');
  assert.equal(model.view().text, '$(check) citelsp P0 0  P1 0');
  model.setNotice('offline — 1 reference not checked');
  model.setRunning(false);
  model.setRunning(true);
  assert.equal(model.view().text, '$(check) citelsp P0 0  P1 0');
});
