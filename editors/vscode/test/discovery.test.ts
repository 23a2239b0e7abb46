import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

import {
  describeAttempts, discover, findOnPath, Machine, missingMessage, parseVersion, Place, places,
  realMachine, runVersion,
} from '../src/discovery';

/** A machine where exactly `executables` exist (and the folders holding them). */
function machine(
  executables: string[],
  options: Partial<Machine> = {},
): Machine {
  const folders = new Set<string>();
  for (const file of executables) {
    for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
      folders.add(dir);
    }
  }
  return {
    platform: 'linux',
    home: '/home/w',
    env: { PATH: '/usr/bin:/bin' },
    workspaceFolders: [],
    workspaceTrusted: true,
    isExecutable: (file) => executables.includes(file),
    isDirectory: (folder) => folders.has(folder),
    list: () => [],
    ...options,
  };
}

const NO_PYTHON = { installed: false } as const;
const UNSET = { path: '', args: [] };

function commands(list: Place[]): string[] {
  return list.filter((p) => p.candidate).map((p) => [p.candidate!.command, ...p.candidate!.args].join(' '));
}

test('a configured server path is the only place', () => {
  const list = places({ path: ' /venv/bin/python ', args: ['-m', 'citelsp'] },
    machine(['/usr/bin/citelsp']), { installed: true, command: ['/usr/bin/python3'] });
  assert.deepEqual(list, [{ source: 'setting', where: 'citelsp.server.path',
    candidate: { command: '/venv/bin/python', args: ['-m', 'citelsp'], source: 'setting' } }]);
});

test('the usual places, in order: PATH, the chosen interpreter, workspace venvs, pipx, pip --user', () => {
  const list = places(UNSET, machine([
    '/usr/bin/citelsp',
    '/ws/.venv/bin/citelsp',
    '/ws/env/bin/python',
    '/home/w/.local/bin/citelsp',
  ], { workspaceFolders: ['/ws'] }), { installed: true, command: ['conda', 'run', '-n', 'x', 'python'] });
  assert.deepEqual(commands(list), [
    '/usr/bin/citelsp',
    'conda run -n x python -m citelsp',
    '/ws/.venv/bin/citelsp',
    '/ws/env/bin/python -m citelsp',
    '/home/w/.local/bin/citelsp',
  ]);
  assert.deepEqual(list.map((p) => p.source),
    ['setting', 'path', 'python', 'workspace', 'workspace', 'pipx']);
});

test('a server installed only by pipx or in a workspace venv is found though PATH lacks it', async () => {
  const pipx = places(UNSET, machine(['/home/w/.local/bin/citelsp']), NO_PYTHON);
  const found = await discover(pipx, async () => '0.1.0');
  assert.equal(found.found?.command, '/home/w/.local/bin/citelsp');
  assert.equal(found.found?.source, 'pipx');

  const venv = places(UNSET, machine(['/ws/.venv/bin/citelsp'], { workspaceFolders: ['/ws'] }), NO_PYTHON);
  assert.equal((await discover(venv, async () => '0.1.0')).found?.command, '/ws/.venv/bin/citelsp');

  const custom = places(UNSET, machine(['/opt/pipx/bin/citelsp'], { env: { PATH: '', PIPX_BIN_DIR: '/opt/pipx/bin' } }),
    NO_PYTHON);
  assert.equal((await discover(custom, async () => '0.1.0')).found?.command, '/opt/pipx/bin/citelsp');
});

test('an untrusted workspace\'s environments are not run', () => {
  const list = places(UNSET, machine(['/ws/.venv/bin/citelsp'], { workspaceFolders: ['/ws'], workspaceTrusted: false }),
    NO_PYTHON);
  assert.deepEqual(commands(list), []);
  assert.ok(list.some((p) => p.missing === 'not looked at: the workspace is not trusted'));
});

test('pip --user folders of macOS and Windows', () => {
  const mac = places(UNSET, machine(['/Users/w/Library/Python/3.12/bin/citelsp'], {
    platform: 'darwin', home: '/Users/w', list: (folder) => folder === '/Users/w/Library/Python' ? ['3.11', '3.12'] : [],
  }), NO_PYTHON);
  assert.deepEqual(commands(mac), ['/Users/w/Library/Python/3.12/bin/citelsp']);
  assert.ok(mac.some((p) => p.where === 'pip --user (/Users/w/Library/Python/3.11/bin)'));

  const exe = 'C:\\Users\\w\\AppData\\Roaming\\Python\\Python312\\Scripts\\citelsp.exe';
  const windows = places(UNSET, machine([exe], {
    platform: 'win32', home: 'C:\\Users\\w', env: { Path: 'C:\\Windows', APPDATA: 'C:\\Users\\w\\AppData\\Roaming' },
    list: (folder) => folder.endsWith('Roaming\\Python') ? ['Python312'] : [],
  }), NO_PYTHON);
  assert.deepEqual(commands(windows), [exe]);
  assert.ok(windows.some((p) => p.where === 'pipx (C:\\Users\\w\\.local\\bin)'));
});

test('every place looked at is logged with why it did not answer', async () => {
  const list = places(UNSET, machine(['/ws/venv/bin/python'], { workspaceFolders: ['/ws', '/other'] }),
    { installed: true });
  const none = await discover(list, async () => {
    throw new Error('No module named citelsp');
  });
  assert.equal(none.found, undefined);
  const lines = describeAttempts(none);
  assert.deepEqual(lines, [
    'citelsp.server.path: not set',
    'PATH: no citelsp in its 2 folders (the editor\'s PATH comes from the program that started it): /usr/bin:/bin',
    'Python extension: no interpreter chosen',
    'workspace /ws/venv: /ws/venv/bin/python -m citelsp: No module named citelsp',
    'workspace /other: no .venv, venv, env folder',
    'pipx (/home/w/.local/bin): no citelsp there',
  ]);
  const message = missingMessage(none);
  assert.match(message, /6 places looked at \(listed in the citelsp output channel\)/);
  assert.match(message, /not on PyPI yet/);
  assert.match(message, /pipx install \/path\/to\/citelsp/);
  assert.doesNotMatch(message, /pipx install citelsp\b/);
});

test('a broken configured path names the setting in the notification', async () => {
  const list = places({ path: '/nonexistent/citelsp', args: [] }, machine([]), NO_PYTHON);
  const none = await discover(list, async () => {
    throw new Error('spawn /nonexistent/citelsp ENOENT');
  });
  assert.equal(missingMessage(none),
    'citelsp: "/nonexistent/citelsp" (citelsp.server.path) did not start the citelsp server: ' +
    'spawn /nonexistent/citelsp ENOENT');
});

test('discovery stops at the first place that answers, keeping the reasons before it', async () => {
  const list = places(UNSET, machine(['/usr/bin/citelsp', '/home/w/.local/bin/citelsp']),
    { installed: true, command: ['/usr/bin/python3'] });
  const result = await discover(list, async (c) => {
    if (c.command === '/usr/bin/citelsp') {
      throw new Error('No module named pygls');
    }
    return '0.1.0';
  });
  assert.deepEqual(result.found, { command: '/usr/bin/python3', args: ['-m', 'citelsp'], source: 'python', version: '0.1.0' });
  assert.deepEqual(describeAttempts(result), [
    'citelsp.server.path: not set',
    'PATH: /usr/bin/citelsp: No module named pygls',
  ]);
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
    'C:\\py\\Scripts\\citelsp.exe');
});

test('only "citelsp <version>" counts as a version', () => {
  assert.equal(parseVersion('citelsp 0.1.0\n'), '0.1.0');
  assert.equal(parseVersion('Python 3.11.2'), undefined);
  assert.equal(parseVersion(''), undefined);
});

test('the real machine finds a workspace venv on disk', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'citelsp-ws-'));
  mkdirSync(path.join(root, '.venv', 'bin'), { recursive: true });
  const server = path.join(root, '.venv', 'bin', 'citelsp');
  writeFileSync(server, '#!/bin/sh\necho "citelsp 9.9.9"\n');
  chmodSync(server, 0o755);
  const list = places(UNSET, { ...realMachine([root], true, path.join(root, 'home')), env: { PATH: '' } }, NO_PYTHON);
  assert.deepEqual(commands(list), [server]);
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
