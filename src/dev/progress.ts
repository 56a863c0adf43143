// The start scripts' progress lines: "▸ label…", then "✓ label (seconds)" when the step is done.
export function progressStep(say: (message: string) => void) {
  return async <T>(label: string, work: () => Promise<T>): Promise<T> => {
    const begun = Date.now();
    say(`▸ ${label}…`);
    const result = await work();
    say(`  ✓ ${label} (${((Date.now() - begun) / 1000).toFixed(1)} s)`);
    return result;
  };
}
