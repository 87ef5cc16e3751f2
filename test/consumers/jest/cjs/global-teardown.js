module.exports = async function globalTeardown() {
  await globalThis.__pushEmulator?.close();
};
