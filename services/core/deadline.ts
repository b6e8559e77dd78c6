/** `promise`, or a rejection "no answer within N ms" once `ms` have passed (the work itself is not cancelled). */
export function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  // One promise and one timer: this wraps every usage report's write (Promise.race and finally made three more).
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
