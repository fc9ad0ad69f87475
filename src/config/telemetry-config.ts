// Whether OpenTelemetry runs, from its standard environment variables: only when an OTLP endpoint
// is named and the SDK is not disabled. Without one nothing is loaded or started, and every
// instrumented path pays one null check.
import type { TelemetrySettings } from './config.js';

const endpointVariables = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
] as const;

const isTrue = (value: string | undefined) => value?.trim().toLowerCase() === 'true';

export function telemetrySettings(
  env: Readonly<Record<string, string | undefined>>,
  defaultServiceName: string,
): TelemetrySettings {
  const named = endpointVariables.some((name) => (env[name] ?? '').trim() !== '');
  const serviceName = (env.OTEL_SERVICE_NAME ?? '').trim();
  return {
    enabled: named && !isTrue(env.OTEL_SDK_DISABLED),
    captureMessageContent: isTrue(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT),
    serviceName: serviceName === '' ? defaultServiceName : serviceName,
  };
}
