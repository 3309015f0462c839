import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { browserRefusal, signInPage } from '../../../companion/src/commands/browser.js';
import { command, detectInvocation, installFolder, spellCommands, testModelCommand } from '../../../companion/src/invocation.js';
import { REPO_ROOT } from '../../helpers/hearth-process.js';
import { tempFolder } from '../../helpers/temp.js';

const terminal = { noBrowser: false, interactive: true, platform: 'linux' as const };

describe('opening the browser at start', () => {
  it('opens it from a terminal with a display, and never with --no-browser, without a display, under CI or without a terminal', () => {
    expect(browserRefusal({ ...terminal, env: { DISPLAY: ':0' } })).toBeUndefined();
    expect(browserRefusal({ ...terminal, env: { WAYLAND_DISPLAY: 'wayland-0' } })).toBeUndefined();
    expect(browserRefusal({ ...terminal, noBrowser: true, env: { DISPLAY: ':0' } })).toBe('--no-browser');
    expect(browserRefusal({ ...terminal, env: {} })).toBe('no display');
    expect(browserRefusal({ ...terminal, env: { DISPLAY: ':0', CI: 'true' } })).toBe('running under CI');
    expect(browserRefusal({ ...terminal, interactive: false, env: { DISPLAY: ':0' } })).toBe('not started from a terminal');
    // macOS and Windows need no DISPLAY.
    expect(browserRefusal({ ...terminal, platform: 'darwin', env: {} })).toBeUndefined();
  });

  it('HEARTH_BROWSER decides when set: a command opens, "none" never', () => {
    expect(browserRefusal({ ...terminal, interactive: false, env: { HEARTH_BROWSER: 'firefox' } })).toBeUndefined();
    expect(browserRefusal({ ...terminal, env: { DISPLAY: ':0', HEARTH_BROWSER: 'none' } })).toBe('HEARTH_BROWSER is off');
    // --no-browser wins over everything.
    expect(browserRefusal({ ...terminal, noBrowser: true, env: { HEARTH_BROWSER: 'firefox' } })).toBe('--no-browser');
  });

  it('the sign-in page sends the browser on with the code in the fragment, escaped for HTML and script', () => {
    const page = signInPage('http://127.0.0.1:4777/sign-in#abc_DEF-123');
    expect(page).toContain('<meta http-equiv="refresh" content="0;url=http://127.0.0.1:4777/sign-in#abc_DEF-123" />');
    expect(page).toContain('location.replace("http://127.0.0.1:4777/sign-in#abc_DEF-123");');
    const hostile = signInPage('http://x/"></script><script>alert(1)</script>');
    expect(hostile).not.toContain('</script><script>alert(1)');
    expect(hostile).not.toContain('"></script>');
  });
});

describe('commands as they run here', () => {
  it('a clone without a linked hearth: npm run hearth -- …, run in the Hearth folder', () => {
    const here = detectInvocation({ PATH: '/usr/bin:/bin' }, REPO_ROOT.replace(/\/$/, ''), 'linux');
    expect(here).toEqual({ command: 'npm run hearth --', start: 'npm start', folder: REPO_ROOT.replace(/\/$/, '') });
    expect(command('open', here)).toBe('npm run hearth -- open');
    expect(spellCommands('Run `hearth open`; hearth pull: cancelled; hearth://svc/x; Hearth open', here)).toBe(
      'Run `npm run hearth -- open`; hearth pull: cancelled; hearth://svc/x; Hearth open',
    );
  });

  it('after npm link (the first hearth on the PATH is this one): hearth …, from anywhere', () => {
    const bin = tempFolder('path');
    symlinkSync(join(REPO_ROOT, 'bin', 'hearth.js'), join(bin, 'hearth'));
    const linked = detectInvocation({ PATH: `${bin}:/usr/bin` }, REPO_ROOT.replace(/\/$/, ''), 'linux');
    expect(linked).toEqual({ command: 'hearth', start: 'hearth' });
    expect(spellCommands('Run hearth open.', linked)).toBe('Run hearth open.');
  });

  it('another program called hearth first on the PATH does not count', () => {
    const bin = tempFolder('path');
    writeFileSync(join(bin, 'hearth'), '#!/bin/sh\necho not this one\n', { mode: 0o755 });
    const other = tempFolder('path');
    symlinkSync(join(REPO_ROOT, 'bin', 'hearth.js'), join(other, 'hearth'));
    expect(detectInvocation({ PATH: `${bin}:${other}` }, REPO_ROOT.replace(/\/$/, ''), 'linux').command).toBe('npm run hearth --');
  });

  it('finds the Hearth folder from any file inside it', () => {
    const nested = join(REPO_ROOT, 'companion', 'src', 'commands');
    expect(installFolder(nested)).toBe(REPO_ROOT.replace(/\/$/, ''));
    const build = tempFolder('build');
    mkdirSync(join(build, 'x'), { recursive: true });
    expect(installFolder(join(build, 'x'))).toBe(join(build, 'x'));
  });

  it('the test model command names the data folder unless it is the default one, quoted when it must be', () => {
    expect(testModelCommand('/home/me/.hearth', '/home/me/.hearth')).toBe('npm run model:tiny');
    expect(testModelCommand('/tmp/data', '/home/me/.hearth')).toBe('npm run model:tiny -- --data-dir /tmp/data');
    expect(testModelCommand("/tmp/my data/it's", '/home/me/.hearth')).toBe("npm run model:tiny -- --data-dir '/tmp/my data/it'\\''s'");
  });
});
