/**
 * docs/architecture.md's layout names every module of the product and of the tools around it (the
 * stage emulator's README maps its own: tools/stage-emulator/test/readme.test.ts), so a reader's
 * map has no blank: a new file fails here until the map says where it belongs.
 */
import { posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { read, sourceFiles } from './sources.ts';

/** The fenced block of `document` under the heading `heading`. */
function fencedBlockUnder(document: string, heading: string): string {
  const text = read(document);
  const section = text.slice(text.indexOf(`\n${heading}\n`));
  const match = /```\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error(`${document} has no fenced block under ${heading}`);
  return match[1]!;
}

const unnamed = (files: readonly string[], text: string) =>
  files.filter(
    (file) => !new RegExp(`(^|[\\s(/])${posix.basename(file).replaceAll('.', '\\.')}(?=[\\s),]|$)`, 'm').test(text),
  );

const MAPPED =
  /^(functions|lib|infra|local|contract|scripts|tools\/(?!stage-emulator\/|openapi-types\/node_modules)[^/]+|client\/src)\//;

describe('the maps of the code', () => {
  it('docs/architecture.md names every module of the product and its tools', () => {
    const files = sourceFiles().filter((path) => MAPPED.test(path) && !path.includes('/test/'));
    expect(files.length).toBeGreaterThan(100);
    expect(unnamed(files, fencedBlockUnder('docs/architecture.md', '## Layout'))).toEqual([]);
  });
});
