// Terminal progress for model downloads: a bar redrawn in place on a TTY, a line per 10% in logs.
import type { DownloadProgress } from './model-downloader.js';

export interface ProgressOutput {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressBarOptions {
  /** Shown before the bar, typically the file name. */
  label: string;
  output?: ProgressOutput;
  now?: () => number;
}

export interface ProgressBar {
  update(progress: DownloadProgress): void;
  /** Draws the final state and ends the line; later updates are ignored. */
  finish(): void;
}

const redrawIntervalMs = 100;
// Without a known total there is no percentage to step by, so logs get a line on this interval.
const unknownTotalLogIntervalMs = 10_000;
const mebibyte = 1024 * 1024;

export function createProgressBar(options: ProgressBarOptions): ProgressBar {
  const output = options.output ?? process.stdout;
  const now = options.now ?? Date.now;
  const interactive = output.isTTY === true;
  let latest: DownloadProgress | null = null;
  let lastDrawAt = Number.NEGATIVE_INFINITY;
  let lastLoggedStep = -1;
  let finished = false;

  const draw = () => {
    if (latest === null) return;
    if (interactive) {
      // \x1b[K clears what a longer previous line left behind.
      output.write(`\r${renderBar(options.label, latest, output.columns ?? 80)}\x1b[K`);
    } else {
      output.write(`${renderLine(options.label, latest)}\n`);
    }
  };

  return {
    update(progress) {
      if (finished) return;
      latest = progress;
      const at = now();
      if (interactive) {
        if (at - lastDrawAt < redrawIntervalMs) return;
      } else if (progress.totalBytes) {
        const step = Math.floor((progress.receivedBytes / progress.totalBytes) * 10);
        if (step <= lastLoggedStep) return;
        lastLoggedStep = step;
      } else if (at - lastDrawAt < unknownTotalLogIntervalMs) {
        return;
      }
      lastDrawAt = at;
      draw();
    },
    finish() {
      if (finished) return;
      finished = true;
      if (interactive) {
        draw();
        if (latest !== null) output.write('\n');
      } else if (latest !== null && !(latest.totalBytes && lastLoggedStep >= 10)) {
        // The final line, unless the last update already logged 100%.
        draw();
      }
    },
  };
}

/** `label [#####-----]  45%  123.4/456.7 MiB  12.3 MiB/s  ETA 0:27`, fitted to `columns`. */
export function renderBar(label: string, progress: DownloadProgress, columns: number): string {
  const { receivedBytes, totalBytes } = progress;
  const details = describe(progress);
  if (!totalBytes) return `${label}  ${details}`;
  const fraction = Math.min(1, receivedBytes / totalBytes);
  const room = columns - label.length - details.length - 6;
  const width = Math.max(10, Math.min(40, room));
  const filled = Math.round(fraction * width);
  return `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${details}`;
}

/** One self-contained log line: `label: 45% (123.4/456.7 MiB, 12.3 MiB/s, ETA 0:27)`. */
export function renderLine(label: string, progress: DownloadProgress): string {
  return `${label}: ${describe(progress)}`;
}

function describe({ receivedBytes, totalBytes, bytesPerSecond }: DownloadProgress): string {
  const speed = `${formatMebibytes(bytesPerSecond)} MiB/s`;
  if (!totalBytes) return `${formatMebibytes(receivedBytes)} MiB  ${speed}`;
  const percent = Math.floor(Math.min(1, receivedBytes / totalBytes) * 100);
  const remaining = Math.max(0, totalBytes - receivedBytes);
  const eta = bytesPerSecond > 0 ? formatDuration(remaining / bytesPerSecond) : '--:--';
  return (
    `${String(percent).padStart(3)}%  ${formatMebibytes(receivedBytes)}/${formatMebibytes(totalBytes)} MiB  ` +
    `${speed}  ETA ${eta}`
  );
}

export function formatMebibytes(bytes: number): string {
  return (bytes / mebibyte).toFixed(1);
}

/** `m:ss`, or `h:mm:ss` from an hour up. */
export function formatDuration(seconds: number): string {
  const total = Math.ceil(seconds);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const rest = String(total % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${rest}` : `${minutes}:${rest}`;
}
