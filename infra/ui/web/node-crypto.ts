/**
 * @module
 * `node:crypto` for the page bundle (esbuild `alias`): the schemas the page
 * shares with the runtime only need `randomBytes`, which Web Crypto gives.
 */
export function randomBytes(size: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(size));
}
