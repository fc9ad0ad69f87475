// An answer rendered through POST /v1/layout (its components, drawn in LayoutParts.tsx: text, heading,
// list, steps, code, table, chart, callout, quote, math, sources, divider, image), typed from the
// OpenAPI document; plain Markdown while the answer streams, and when the layout cannot be had
// (feature off, error).
import { Stack } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { LayoutPart, MarkdownAnswer } from './LayoutParts';

export type { LayoutComponent } from './LayoutParts';

export function Answer({ content, final }: { content: string; final: boolean }) {
  // The same text always lays out the same way: one request per answer text, however often shown.
  const layout = useQuery({
    queryKey: ['layout', content],
    queryFn: async () =>
      unwrap(await api.POST('/v1/layout', { body: { message: content } })).layout.components,
    enabled: final,
    staleTime: Infinity,
    retry: false,
  });

  // While the answer streams, and when the layout cannot be had (feature off, any failure): Markdown.
  if (!final || layout.data === undefined) return <MarkdownAnswer content={content} />;
  return (
    <Stack gap="xs" data-layout="components">
      {layout.data.map((component) => (
        <LayoutPart key={component.id} component={component} />
      ))}
    </Stack>
  );
}
