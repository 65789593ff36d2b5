import type { Readable, Writable } from 'node:stream';

/** What a terminal's standard input is, as far as reading a password needs. */
type Terminal = Readable & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };

const ENTER = new Set(['\r', '\n', '\u0004']);
const ERASE = new Set(['\u007f', '\b']);
const CANCEL = '\u0003';
const ERASE_LINE = '\u0015';

/**
 * Lines typed on a terminal in raw mode: nothing typed is shown (the terminal echoes nothing, and neither
 * does this), Backspace and Ctrl-U edit, Ctrl-C cancels. Raw mode is on before the first prompt appears
 * and stays on until `close`, so no keystroke typed ahead is ever echoed.
 */
function hiddenLines(input: Terminal, prompt: Writable) {
  const lines: string[] = [];
  let typed: string[] = [];
  let cancelled = false;
  let waiting: { resolve: (line: string) => void; reject: (err: Error) => void } | undefined;
  const deliver = () => {
    if (!waiting || (!cancelled && lines.length === 0)) return;
    const { resolve, reject } = waiting;
    waiting = undefined;
    prompt.write('\n');
    if (cancelled) reject(new Error('cancelled: the password was not changed'));
    else resolve(lines.shift()!);
  };
  const onData = (chunk: string) => {
    for (const ch of chunk) {
      if (ENTER.has(ch)) {
        lines.push(typed.join(''));
        typed = [];
      } else if (ch === CANCEL) cancelled = true;
      else if (ERASE.has(ch)) typed = typed.slice(0, -1);
      else if (ch === ERASE_LINE) typed = [];
      else typed.push(ch);
    }
    deliver();
  };
  input.setRawMode!(true);
  input.setEncoding('utf8');
  input.on('data', onData);
  input.resume();
  return {
    read(label: string): Promise<string> {
      prompt.write(label);
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        deliver();
      });
    },
    close() {
      input.off('data', onData);
      input.setRawMode!(false);
      input.pause();
    },
  };
}

/** The first line of a piped input, without its line ending. */
async function firstLine(input: Readable): Promise<string> {
  let text = '';
  for await (const chunk of input) {
    text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
    if (text.includes('\n')) break;
  }
  return text.split('\n')[0]!.replace(/\r$/, '');
}

/**
 * A new password from standard input: typed twice without echo on a terminal (prompts on `prompt`, stderr),
 * else the first line of what was piped in, so it never appears on a command line or in shell history.
 */
export async function readNewPassword(input: Terminal = process.stdin, prompt: Writable = process.stderr): Promise<{ newPassword: string; confirmPassword: string }> {
  if (!input.isTTY || !input.setRawMode) {
    const line = await firstLine(input);
    return { newPassword: line, confirmPassword: line };
  }
  const terminal = hiddenLines(input, prompt);
  try {
    const newPassword = await terminal.read('New password: ');
    const confirmPassword = await terminal.read('Repeat the new password: ');
    return { newPassword, confirmPassword };
  } finally {
    terminal.close();
  }
}
