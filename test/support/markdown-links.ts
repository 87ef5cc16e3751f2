/**
 * The relative links of Markdown pages, and whether each resolves: the file (or directory) exists
 * under a root, and an `#anchor` into a Markdown page names one of its headings. Used on the
 * repository and on the unpacked tarball, so that the same pages are checked in both places.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

export interface MarkdownLink {
  /** The page holding the link, relative to the root. */
  page: string;
  /** 1-based line of the link in that page. */
  line: number;
  target: string;
}

/** Links that leave the package: another scheme, or a protocol-relative address. */
const EXTERNAL = /^(?:[a-z][a-z0-9+.-]*:|\/\/)/i;

/** The page's text with fenced code blocks (and, unless kept, inline code) blanked out, line count kept. */
function proseOf(markdown: string, keepInlineCode = false): string {
  let fence: string | undefined;
  return markdown
    .split('\n')
    .map((line) => {
      const opening = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence === undefined && opening !== undefined) {
        fence = opening;
        return '';
      }
      if (fence !== undefined) {
        if (new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`).test(line)) fence = undefined;
        return '';
      }
      return keepInlineCode ? line : line.replace(/(`+)[^`]*?\1/g, '');
    })
    .join('\n');
}

/** Relative link targets of a page: inline links and images `[text](target)`, and `[label]: target` definitions. */
export function relativeLinks(markdown: string, page: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  proseOf(markdown)
    .split('\n')
    .forEach((text, index) => {
      const targets = [
        ...[...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]),
        ...[...text.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g)].map((match) => match[1]),
      ];
      for (const target of targets) {
        if (target !== undefined && !EXTERNAL.test(target)) links.push({ page, line: index + 1, target });
      }
    });
  return links;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown page: one per heading, with GitHub's `-1`, `-2` suffixes for repeats. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseOf(markdown, true).split('\n')) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = headingSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/**
 * Why a link does not resolve under `root`, or undefined when it does. A target outside the root
 * does not resolve: in the tarball, that is a file the package does not ship.
 */
export function brokenReason(link: MarkdownLink, root: string): string | undefined {
  const [pathPart = '', anchor] = link.target.split('#', 2);
  let path: string;
  try {
    path = decodeURIComponent(pathPart);
  } catch {
    return 'is not a valid percent-encoded path';
  }
  const file = path === '' ? join(root, link.page) : normalize(join(root, dirname(link.page), path));
  const inside = relative(root, file);
  if (inside.startsWith('..')) return 'points outside the package root';
  if (!existsSync(file)) return `${inside} does not exist`;
  if (anchor === undefined || anchor === '' || !file.endsWith('.md') || statSync(file).isDirectory()) return undefined;
  if (!anchorsOf(readFileSync(file, 'utf8')).has(anchor.toLowerCase())) return `${inside} has no heading #${anchor}`;
  return undefined;
}

/** Every broken relative link of `pages` under `root`, as `page:line target: reason`. */
export function brokenLinks(root: string, pages: readonly string[]): string[] {
  return pages.flatMap((page) =>
    relativeLinks(readFileSync(join(root, page), 'utf8'), page).flatMap((link) => {
      const reason = brokenReason(link, root);
      return reason === undefined ? [] : [`${link.page}:${link.line} ${link.target}: ${reason}`];
    }),
  );
}
