// The built dashboard keeps its initial JavaScript within budget, with the pipeline editor and the
// charts out of the initial load (measured as bench/web-bundle.ts does).
import { describe, expect, it } from 'vitest';
import { initialJavaScriptBudgetBytes, measureWebBundle } from '../bench/web-bundle.js';
import { webBundleBuilt } from './support/web-bundle.js';

const built = await webBundleBuilt();
if (!built)
  process.stdout.write(
    "\n[web-bundle] web/dist is not built: SKIPPED (run 'npm run build:web').\n",
  );

describe.skipIf(!built)('the dashboard bundle', () => {
  it('loads at most 250 KB of gzipped JavaScript first; the editor and charts come on demand', () => {
    const measurement = measureWebBundle();
    expect(measurement.initial.length).toBeGreaterThan(0);
    expect(measurement.initialGzipBytes).toBeLessThanOrEqual(initialJavaScriptBudgetBytes);
    const initialNames = measurement.initial.map((item) => item.file).join(' ');
    expect(initialNames).not.toMatch(/PipelineEditorPage|UsageCharts|LineChart|LayoutChart/);
    const lazyNames = measurement.onDemand.map((item) => item.file).join(' ');
    expect(lazyNames).toMatch(/PipelineEditorPage/);
    expect(lazyNames).toMatch(/UsageCharts/);
  });
});
