/**
 * A small SVG plot of one run's in-flight window (bench/lib/window-trace.ts), written without a
 * dependency: requests in flight as measured by the hooks, and the limiter's window where the SDK
 * reports it. The output depends on the trace alone, so the generated file can be checked.
 */
import type { WindowTrace } from './window-trace.js';

const WIDTH = 720;
const HEIGHT = 300;
const LEFT = 48;
const RIGHT = 16;
const TOP = 60;
const BOTTOM = 44;
const PLOT_W = WIDTH - LEFT - RIGHT;
const PLOT_H = HEIGHT - TOP - BOTTOM;
const IN_FLIGHT_COLOR = '#2b6cb0';
const LIMIT_COLOR = '#dd6b20';

const fixed = (value: number) => (Math.round(value * 10) / 10).toString();

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A step line through `[t, y]` points: each value holds until the next point. */
function stepPath(
  points: readonly (readonly [number, number])[],
  x: (t: number) => number,
  y: (v: number) => number,
  endT: number,
): string {
  if (points.length === 0) return '';
  const parts: string[] = [];
  let previous: number | undefined;
  for (const [t, value] of points) {
    if (previous === undefined) parts.push(`M${fixed(x(t))},${fixed(y(value))}`);
    else parts.push(`H${fixed(x(t))}`, `V${fixed(y(value))}`);
    previous = value;
  }
  parts.push(`H${fixed(x(endT))}`);
  return parts.join('');
}

/** Round steps for an axis: 1, 2 or 5 times a power of ten, about `count` of them. */
function tickStep(span: number, count: number): number {
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= raw);
  return step ?? 10 * power;
}

export function windowSvg(trace: WindowTrace, title: string, subtitle = ''): string {
  const endT = Math.max(trace.durationMs, ...trace.inFlight.map(([t]) => t), ...trace.limit.map((p) => p.tMs), 1);
  const top = Math.max(4, ...trace.inFlight.map(([, n]) => n), ...trace.limit.map((p) => p.limit));
  const yTop = top + Math.max(1, Math.ceil(top * 0.1));
  const x = (t: number) => LEFT + (t / endT) * PLOT_W;
  const y = (v: number) => TOP + PLOT_H - (v / yTop) * PLOT_H;
  const lines: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12" role="img">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${LEFT}" y="18" font-size="14" font-weight="bold">${escapeXml(title)}</text>`,
    `<text x="${LEFT}" y="34" fill="#4a5568">${escapeXml(subtitle)}</text>`,
  ];
  const yStep = tickStep(yTop, 5);
  for (let v = 0; v <= yTop; v += yStep) {
    lines.push(
      `<line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${fixed(y(v))}" y2="${fixed(y(v))}" stroke="#e2e8f0"/>`,
      `<text x="${LEFT - 6}" y="${fixed(y(v) + 4)}" text-anchor="end">${v}</text>`,
    );
  }
  const tStep = tickStep(endT, 8);
  for (let t = 0; t <= endT; t += tStep) {
    const label = endT >= 2000 ? `${fixed(t / 1000)} s` : `${Math.round(t)} ms`;
    lines.push(
      `<line x1="${fixed(x(t))}" x2="${fixed(x(t))}" y1="${TOP + PLOT_H}" y2="${TOP + PLOT_H + 4}" stroke="#4a5568"/>`,
      `<text x="${fixed(x(t))}" y="${TOP + PLOT_H + 18}" text-anchor="middle">${label}</text>`,
    );
  }
  lines.push(
    `<line x1="${LEFT}" x2="${LEFT}" y1="${TOP}" y2="${TOP + PLOT_H}" stroke="#4a5568"/>`,
    `<line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${TOP + PLOT_H}" y2="${TOP + PLOT_H}" stroke="#4a5568"/>`,
    `<text x="${LEFT + PLOT_W / 2}" y="${HEIGHT - 6}" text-anchor="middle">time since the publish call</text>`,
    `<path d="${stepPath(trace.inFlight, x, y, endT)}" fill="none" stroke="${IN_FLIGHT_COLOR}" stroke-width="1.5"/>`,
  );
  const limits = trace.limit.map((point) => [point.tMs, point.limit] as const);
  if (limits.length > 0) {
    lines.push(`<path d="${stepPath(limits, x, y, endT)}" fill="none" stroke="${LIMIT_COLOR}" stroke-width="2"/>`);
  }
  const legendY = 50;
  lines.push(
    `<line x1="${LEFT}" x2="${LEFT + 20}" y1="${legendY - 4}" y2="${legendY - 4}" stroke="${IN_FLIGHT_COLOR}" stroke-width="2"/>`,
    `<text x="${LEFT + 26}" y="${legendY}">requests in flight</text>`,
    limits.length > 0
      ? `<line x1="${LEFT + 150}" x2="${LEFT + 170}" y1="${legendY - 4}" y2="${legendY - 4}" stroke="${LIMIT_COLOR}" stroke-width="2"/><text x="${LEFT + 176}" y="${legendY}">window (concurrency hook)</text>`
      : `<text x="${LEFT + 150}" y="${legendY}" fill="#718096">window: no concurrency hook events from this SDK</text>`,
    '</svg>',
  );
  return `${lines.join('\n')}\n`;
}
