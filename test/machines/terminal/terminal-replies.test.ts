import { describe, expect, it } from 'vitest';
import { isTerminalReply } from '../../../machines/terminal/terminal-replies.ts';

describe('isTerminalReply: what an emulator answers by itself is told from keys', () => {
  it.each([
    ['DA1', '\x1b[?1;2c'],
    ['DA2', '\x1b[>0;276;0c'],
    ['cursor position', '\x1b[2;6R'],
    ['status', '\x1b[0n'],
    ['OSC 10 colour, BEL', '\x1b]10;rgb:ffff/ffff/ffff\x07'],
    ['OSC 11 colour, ST', '\x1b]11;rgb:0000/0000/0000\x1b\\'],
    ['palette', '\x1b]4;1;rgb:cd00/0000/0000\x07'],
    ['DECRQSS', '\x1bP1$r0m\x1b\\'],
    ['window size', '\x1b[8;24;80t'],
    ['focus out', '\x1b[O'],
    ['several at once', '\x1b[?1;2c\x1b[2;6R\x1b[I'],
  ])('%s is a reply', (_name, data) => expect(isTerminalReply(data)).toBe(true));

  it.each([
    ['a letter', 'a'],
    ['Enter', '\r'],
    ['an arrow key', '\x1b[A'],
    ['F5', '\x1b[15~'],
    ['Escape', '\x1b'],
    ['a paste holding a reply and text', 'ls\x1b[0n'],
    ['a mouse click report', '\x1b[<0;10;5M'],
  ])('%s is typed input', (_name, data) => expect(isTerminalReply(data)).toBe(false));
});
