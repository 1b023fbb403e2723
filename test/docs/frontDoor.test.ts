/**
 * The README is a front door (at most 300 lines) and docs/ holds the rest, by task: every document
 * in docs/ is listed in the README, opens with its own table of contents, and every relative link
 * in the README or docs/ reaches an existing file and, when it names one, an existing heading.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const README_MAX_LINES = 300;

const DOCS = readdirSync(join(ROOT, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The lines of a Markdown text outside fenced code blocks. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of prose(text)) {
    const heading = /^#{1,6} (.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\- _]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    found.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return found;
}

/** Every relative link target (`path`, `path#anchor` or `#anchor`) in a Markdown text, outside code. */
function relativeLinks(text: string): string[] {
  const targets: string[] = [];
  for (const line of prose(text)) {
    const withoutCode = line.replace(/`[^`]*`/g, '');
    for (const match of withoutCode.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1]!;
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) targets.push(target);
    }
  }
  return targets;
}

/** What is wrong with each relative link of `file`: a missing file or a missing heading. */
function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const target of relativeLinks(read(file))) {
    const [path, anchor] = target.split('#') as [string, string | undefined];
    const linked = path === '' ? file : relative(ROOT, resolve(ROOT, dirname(file), path));
    if (!existsSync(join(ROOT, linked))) {
      broken.push(`${file}: ${target}: no file ${linked}`);
      continue;
    }
    if (anchor !== undefined && linked.endsWith('.md') && !anchors(read(linked)).has(decodeURIComponent(anchor))) {
      broken.push(`${file}: ${target}: no heading #${anchor} in ${linked}`);
    }
  }
  return broken;
}

describe('the README as a front door', () => {
  it(`is at most ${README_MAX_LINES} lines`, () => {
    expect(read('README.md').split('\n').length - 1).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('lists every document of docs/, and links only documents that exist', () => {
    const linked = relativeLinks(read('README.md'))
      .map((target) => target.split('#')[0]!)
      .filter((path) => path.startsWith('docs/'));
    expect(DOCS.length).toBeGreaterThan(0);
    for (const doc of DOCS) expect(linked, `README links ${doc}`).toContain(doc);
    for (const path of linked) expect(existsSync(join(ROOT, path)), `${path} exists`).toBe(true);
  });

  it.each(DOCS)('%s opens with its title and a table of contents of its sections', (doc) => {
    const lines = prose(read(doc));
    expect(lines[0]).toMatch(/^# \S/);
    const sections = lines.filter((line) => line.startsWith('## ')).map((line) => line.slice(3));
    const firstSection = lines.findIndex((line) => line.startsWith('## '));
    const contents = lines.slice(1, firstSection).join('\n');
    expect(sections.length).toBeGreaterThan(0);
    for (const section of sections)
      expect(contents, `${doc} lists "${section}"`).toContain(`(#${[...anchors(`## ${section}`)][0]})`);
  });

  it.each(['README.md', ...DOCS])('%s: every relative link reaches a file and heading that exist', (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });
});
