/**
 * Runs competing variants in alternation, round after round, so that a burst of load from other
 * processes on a shared machine hits every variant alike rather than one of them.
 */

export type Variant<T> = { name: string; run: () => Promise<T> };

/** Samples of each variant, by name, in round order. The order inside a round rotates. */
export async function alternate<T>(rounds: number, variants: readonly Variant<T>[]): Promise<Map<string, T[]>> {
  const samples = new Map<string, T[]>(variants.map((variant) => [variant.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < variants.length; i++) {
      const variant = variants[(i + round) % variants.length] as Variant<T>;
      samples.get(variant.name)?.push(await variant.run());
    }
  }
  return samples;
}

/** Measures one async call in milliseconds. */
export async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}
