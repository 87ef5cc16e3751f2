/**
 * Preloaded (`node --import`) into a measured child: on exit it writes the process's peak RSS
 * (`process.resourceUsage().maxRSS`, in KiB) to the file named by BENCH_RSS_FILE. This lets the
 * harness measure a program it does not control, such as the built CLI, without a wrapper.
 */
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_RSS_FILE;
if (file) {
  process.on('exit', () => {
    writeFileSync(file, JSON.stringify({ maxRssKiB: process.resourceUsage().maxRSS }));
  });
}
