/**
 * Whether a token refresh ends with the call that started it. In Node, Bun and Deno a refresh's
 * request, timers and answer belong to the process: when the call that started it gives up, the
 * refresh goes on for the others waiting for it. Its twin refresh-owner.web.ts says otherwise for
 * workers and edge runtimes.
 */
export const REFRESH_ENDS_WITH_ITS_STARTER = false;
