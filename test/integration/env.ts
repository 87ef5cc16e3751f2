/** Connection settings of the servers started by scripts/start-services.sh (its defaults). */
export const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:55432/postgres';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:56379';
