/**
 * The state behind an emulator, for the emulator's own views (the inspector's overview), which run
 * on every change while a page is open and must not copy what grows with a long run. The public
 * `state` view hands out fresh copies, which is right for a test's assertions and wrong there.
 */
import type { EmulatorState } from './state.js';

const states = new WeakMap<object, EmulatorState>();

export function registerState(emulator: object, state: EmulatorState): void {
  states.set(emulator, state);
}

/** The state of an emulator made by `createPushApiHandler`; undefined for any other object. */
export function stateOf(emulator: object): EmulatorState | undefined {
  return states.get(emulator);
}
