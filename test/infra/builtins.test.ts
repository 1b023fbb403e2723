/**
 * The Lambda bundles' Node built-ins (infra/bundle/builtins/, `builtinAliases`): each module hands out the
 * built-in's own functions and classes, so a bundle behaves as with the built-in itself.
 */
import * as nodeCrypto from 'node:crypto';
import * as nodeFs from 'node:fs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, builtinAliases } from '../../infra/bundle/bundling.ts';
import { getRandomValues } from '../../infra/bundle/builtins/crypto.ts';
import { ReadStream } from '../../infra/bundle/builtins/fs.ts';
import { readFile } from '../../infra/bundle/builtins/fsPromises.ts';

const modules = [...new Set(Object.values(builtinAliases))];

describe('infra/bundle/builtins/', () => {
  it.each(modules.map((file) => [relative(PROJECT_ROOT, file), file] as const))('%s exports the built-in\'s own values', async (_name, file) => {
    const specifier = Object.entries(builtinAliases).find(([from, to]) => to === file && from.startsWith('node:'))![0];
    const builtin = (await import(specifier)) as Record<string, unknown>;
    const ours = (await import(file)) as Record<string, unknown>;
    const names = Object.keys(ours).filter((name) => name !== 'default');
    expect(names.length, specifier).toBeGreaterThan(0);
    // Wrapped on purpose (read when used, not at import): getRandomValues, ReadStream, and fs/promises' readFile.
    const wrapped = new Set(['getRandomValues', 'ReadStream', ...(specifier === 'node:fs/promises' ? ['readFile'] : [])]);
    for (const name of names.filter((each) => !wrapped.has(each))) expect(ours[name], `${specifier} ${name}`).toBe(builtin[name]);
    if ('default' in ours) expect(ours.default, specifier).toBe(builtin.default);
  });

  it('getRandomValues fills the array it is given', () => {
    const array = getRandomValues(new Uint8Array(32));
    expect(array).toHaveLength(32);
    expect(array.some((byte) => byte !== 0)).toBe(true);
    // As Web Crypto's own: more than 65,536 bytes at once is refused.
    expect(() => getRandomValues(new Uint8Array(70_000))).toThrow();
    expect(() => nodeCrypto.getRandomValues(new Uint8Array(70_000))).toThrow();
  });

  it('ReadStream: instanceof tests fs.ReadStream, and new makes a real one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-builtins-'));
    try {
      writeFileSync(join(dir, 'file'), 'x');
      // Constructed as Node's own is, with a path (its type declares only Readable's options).
      const made = new (ReadStream as unknown as new (path: string) => nodeFs.ReadStream)(join(dir, 'file'));
      expect(made).toBeInstanceOf(nodeFs.ReadStream);
      expect(made instanceof ReadStream).toBe(true);
      const real = nodeFs.createReadStream(join(dir, 'file'));
      expect(real instanceof ReadStream).toBe(true);
      await Promise.all([once(made, 'ready'), once(real, 'ready')]);
      made.destroy();
      real.destroy();
      expect({} instanceof ReadStream).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fs/promises readFile reads text, and rejects a missing file with ENOENT as the built-in does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-builtins-'));
    try {
      writeFileSync(join(dir, 'config'), '[default]\nregion = eu-west-1\n');
      expect(await readFile(join(dir, 'config'), 'utf8')).toBe('[default]\nregion = eu-west-1\n');
      await expect(readFile(join(dir, 'missing'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
