import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

import { candidates, describeAttempts, discover, findOnPath, parseVersion, runVersion, ServerCommand } from '../src/discovery';

test('a configured server path is the only candidate', () => {
  assert.deepEqual(
    candidates({ path: ' /venv/bin/python ', args: ['-m', 'citelsp'] }, '/usr/bin/citelsp', ['/usr/bin/python3']),
    [{ command: '/venv/bin/python', args: ['-m', 'citelsp'], source: 'setting' }]);
});

test('without a setting: citelsp on PATH, then the Python interpreter with -m citelsp', () => {
  assert.deepEqual(candidates({ path: '', args: [] }, '/usr/bin/citelsp', ['conda', 'run', '-n', 'x', 'python']), [
    { command: '/usr/bin/citelsp', args: [], source: 'path' },
    { command: 'conda', args: ['run', '-n', 'x', 'python', '-m', 'citelsp'], source: 'python' },
  ]);
  assert.deepEqual(candidates({ path: '', args: [] }, undefined, undefined), []);
});

test('PATH lookup takes the first executable and skips empty entries', () => {
  const seen: string[] = [];
  const found = findOnPath('citelsp', '/a::/b:/c', 'linux', (file) => {
    seen.push(file);
    return file.startsWith('/b/') || file.startsWith('/c/');
  });
  assert.equal(found, path.join('/b', 'citelsp'));
  assert.deepEqual(seen, [path.join('/a', 'citelsp'), path.join('/b', 'citelsp')]);
  assert.equal(findOnPath('citelsp', undefined, 'linux', () => true), undefined);
  assert.equal(findOnPath('citelsp', 'C:\\py\\Scripts', 'win32', (f) => f.endsWith('.exe')),
    path.join('C:\\py\\Scripts', 'citelsp.exe'));
});

test('only "citelsp <version>" counts as a version', () => {
  assert.equal(parseVersion('citelsp 0.1.0\n'), '0.1.0');
  assert.equal(parseVersion('Python 3.11.2'), undefined);
  assert.equal(parseVersion(''), undefined);
});

test('discovery tries candidates in order and keeps the reasons of those that failed', async () => {
  const list: ServerCommand[] = [
    { command: '/usr/bin/citelsp', args: [], source: 'path' },
    { command: 'python3', args: ['-m', 'citelsp'], source: 'python' },
  ];
  const result = await discover(list, async (c) => {
    if (c.source === 'path') {
      throw new Error('No module named pygls');
    }
    return '0.1.0';
  });
  assert.deepEqual(result.found, { ...list[1], version: '0.1.0' });
  assert.deepEqual(describeAttempts(result), ['path: /usr/bin/citelsp: No module named pygls']);

  const none = await discover(list, async () => { throw new Error('ENOENT'); });
  assert.equal(none.found, undefined);
  assert.equal(none.attempts.length, 2);
});

test('runVersion runs the program and rejects what is not citelsp', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'citelsp-discovery-'));
  const good = path.join(dir, 'good');
  writeFileSync(good, '#!/bin/sh\necho "citelsp 9.9.9"\n');
  const other = path.join(dir, 'other');
  writeFileSync(other, '#!/bin/sh\necho "Python 3.11"\n');
  const broken = path.join(dir, 'broken');
  writeFileSync(broken, '#!/bin/sh\necho "ModuleNotFoundError: No module named citelsp" >&2\nexit 1\n');
  for (const file of [good, other, broken]) {
    chmodSync(file, 0o755);
  }
  assert.equal(await runVersion({ command: good, args: [], source: 'setting' }), '9.9.9');
  await assert.rejects(runVersion({ command: other, args: [], source: 'setting' }), /did not print/);
  await assert.rejects(runVersion({ command: broken, args: [], source: 'setting' }), /No module named citelsp/);
  await assert.rejects(runVersion({ command: path.join(dir, 'missing'), args: [], source: 'setting' }), /ENOENT/);
});
