/**
 * What an app does with a `Response`, one step at a time, and what each step gave as plain data (a value, or the
 * class of the error it threw or rejected with), so that two responses can be compared step by step
 * (test/transports/bytes-response.test.ts).
 */
export type ResponseStep =
  | 'text'
  | 'json'
  | 'arrayBuffer'
  | 'bytes'
  | 'blob'
  | 'formData'
  | 'readBody'
  | 'bodyUsed'
  | 'bodyIsNull'
  | 'cloneAndText';

export const RESPONSE_STEPS: readonly ResponseStep[] = [
  'text',
  'json',
  'arrayBuffer',
  'bytes',
  'blob',
  'formData',
  'readBody',
  'bodyUsed',
  'bodyIsNull',
  'cloneAndText',
];

/** What one step gave, as plain data: a value, or the class of the error it threw or rejected with. */
export async function runResponseStep(response: Response, step: ResponseStep): Promise<unknown> {
  try {
    switch (step) {
      case 'text':
        return { value: await response.text() };
      case 'json':
        return { value: (await response.json()) as unknown };
      case 'arrayBuffer': {
        const buffer = await response.arrayBuffer();
        return { value: [...new Uint8Array(buffer)], isArrayBuffer: buffer instanceof ArrayBuffer };
      }
      case 'bytes': {
        const bytes = await response.bytes();
        return { value: [...bytes], isUint8Array: bytes instanceof Uint8Array };
      }
      case 'blob': {
        const blob = await response.blob();
        return { value: [...new Uint8Array(await blob.arrayBuffer())], type: blob.type };
      }
      case 'formData':
        // An urlencoded body holds strings only; a File would show as its name.
        return {
          value: [...(await response.formData())].map(([k, v]) => [k, typeof v === 'string' ? v : v.name]),
        };
      case 'readBody': {
        const body = response.body;
        if (body === null) return { value: null };
        const reader = body.getReader();
        const chunks: number[] = [];
        for (let read = await reader.read(); !read.done; read = await reader.read())
          chunks.push(...read.value);
        return { value: chunks };
      }
      case 'bodyUsed':
        return { value: response.bodyUsed };
      case 'bodyIsNull':
        return { value: response.body === null };
      case 'cloneAndText': {
        const copy = response.clone();
        return { value: await copy.text(), status: copy.status, type: copy.headers.get('content-type') };
      }
    }
  } catch (error) {
    return { error: (error as Error).constructor.name };
  }
}
