/**
 * @module
 * What a terminal emulator sends back by itself, not typed: answers to queries a program printed (device
 * attributes, cursor position and status reports, colours, DECRQSS, window reports) and focus reports. The
 * web console's xterm sent those to the agent's terminal as `terminal.write`, so an agent could make the log
 * say the operator typed them (the console review of 3 December). Pure.
 */

/** One reply: CSI ?/>/= … c (DA1-3), CSI … R/n (CPR, DSR), CSI … t, CSI I/O (focus), OSC 4/10-19 …, DCS … ST. */
const REPLY =
  '\\x1b\\[[?>=]?[0-9;]*c' +
  '|\\x1b\\[\\??[0-9;]*[Rn]' +
  '|\\x1b\\[[0-9;]*t' +
  '|\\x1b\\[[IO]' +
  '|\\x1b\\](?:4;[0-9]+|1[0-9]);[^\\x07\\x1b]*(?:\\x07|\\x1b\\\\)' +
  '|\\x1bP[^\\x1b]*\\x1b\\\\';
const ONLY_REPLIES = new RegExp(`^(?:${REPLY})+$`);

/** Whether `data` is nothing but replies the emulator made by itself (never keys a person typed). */
export function isTerminalReply(data: string): boolean {
  return ONLY_REPLIES.test(data);
}
