/**
 * @module
 * `node:crypto` for the page bundle (esbuild `alias`): the schemas the page
 * shares with the runtime only need `randomFillSync` (newId's pool), which Web Crypto gives.
 */
export function randomFillSync(buffer: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  crypto.getRandomValues(buffer);
  return buffer;
}
