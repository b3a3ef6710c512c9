/**
 * The one rule every piece of text obeys, whatever the field (issue #21 §5): no control
 * characters other than tab, line feed and carriage return. PostgreSQL cannot store NUL in text
 * at all (it answered 500 for one in a message or a name), and no name, message or credential
 * has a use for the other C0 and C1 controls or DEL: they only hide or garble what is shown.
 * Both databases get the same answer, a 400 naming the field, before anything is stored.
 */
const FORBIDDEN_CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;

export const CONTROL_CHARACTER_ERROR = { code: 'BASE_TYPE_INVALID', message: 'Must not contain control characters (such as the NUL character, U+0000).' } as const;

/** Whether `text` holds a control character no field may hold. */
export function hasForbiddenControl(text: string): boolean {
  return FORBIDDEN_CONTROL.test(text);
}

/**
 * The path of every string in `value` (a parsed JSON or form body, a query) that holds a
 * forbidden control character, object keys included (a key is reported as its own path).
 * Iterative, so a deeply nested body cannot exhaust the stack; each string is scanned once.
 */
export function findForbiddenText(value: unknown): (string | number)[][] {
  const found: (string | number)[][] = [];
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop() as { value: unknown; path: (string | number)[] };
    if (typeof current === 'string') {
      if (hasForbiddenControl(current)) found.push(path);
    } else if (Array.isArray(current)) {
      current.forEach((item, index) => stack.push({ value: item, path: [...path, index] }));
    } else if (current !== null && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        if (hasForbiddenControl(key)) found.push([...path, key]);
        else stack.push({ value: item, path: [...path, key] });
      }
    }
  }
  return found;
}
