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

/** A node of the walk: its parent link is followed only to name a field that breaks the rule. */
interface Visit {
  value: unknown;
  key: string | number | undefined;
  parent: Visit | undefined;
}

function pathOf(visit: Visit): (string | number)[] {
  const path: (string | number)[] = [];
  for (let node: Visit | undefined = visit; node?.key !== undefined; node = node.parent) path.push(node.key);
  return path.reverse();
}

/**
 * The path of every string in `value` (a parsed JSON or form body, a query) that holds a
 * forbidden control character, object keys included (a key is reported as its own path).
 * Iterative, so a deeply nested body cannot exhaust the stack, and linear in the size of the
 * value (DESIGN §5): paths are built from parent links only for the fields that are reported.
 */
export function findForbiddenText(value: unknown): (string | number)[][] {
  const found: (string | number)[][] = [];
  const stack: Visit[] = [{ value, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    const current = visit.value;
    if (typeof current === 'string') {
      if (hasForbiddenControl(current)) found.push(pathOf(visit));
    } else if (Array.isArray(current)) {
      for (let index = 0; index < current.length; index += 1) stack.push({ value: current[index], key: index, parent: visit });
    } else if (current !== null && typeof current === 'object') {
      for (const key of Object.keys(current)) {
        const child: Visit = { value: (current as Record<string, unknown>)[key], key, parent: visit };
        if (hasForbiddenControl(key)) found.push(pathOf(child));
        else stack.push(child);
      }
    }
  }
  return found;
}
