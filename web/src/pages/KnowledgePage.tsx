// Knowledge bases: create one, upload text, Markdown and HTML files as documents, search with scores.
import {
  Badge,
  Button,
  Card,
  FileInput,
  Group,
  NumberInput,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import { ErrorAlert, Page, formatDate, useLoad } from '../components/common';

function contentTypeOf(file: File): 'text/plain' | 'text/markdown' | 'text/html' {
  const name = file.name.toLowerCase();
  if (name.endsWith('.md') || name.endsWith('.markdown')) return 'text/markdown';
  if (name.endsWith('.html') || name.endsWith('.htm')) return 'text/html';
  return 'text/plain';
}

export default function KnowledgePage() {
  const bases = useLoad(async () =>
    unwrap(await api.GET('/v1/knowledge-bases', { params: { query: { limit: 100, offset: 0 } } })),
  );
  const [selected, setSelected] = useState<string | null>(null);
  const [newName, setNewName] = useState('');
  const [files, setFiles] = useState<File[]>([]);
  const [query, setQuery] = useState('');
  const [topK, setTopK] = useState<number | string>(5);
  const [error, setError] = useState<unknown>(null);
  const [uploaded, setUploaded] = useState<string | null>(null);
  const documents = useLoad(
    async () =>
      selected === null
        ? null
        : unwrap(
            await api.GET('/v1/knowledge-bases/{kb_id}/documents', {
              params: { path: { kb_id: selected }, query: { limit: 100, offset: 0 } },
            }),
          ),
    [selected, uploaded],
  );
  const [results, setResults] = useState<
    { document_id: string; title: string; text: string; score: number; heading: string }[] | null
  >(null);

  async function create(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      const created = unwrap(await api.POST('/v1/knowledge-bases', { body: { name: newName } }));
      setNewName('');
      bases.reload();
      setSelected(created.id);
    } catch (reason) {
      setError(reason);
    }
  }

  async function upload(event: FormEvent) {
    event.preventDefault();
    if (selected === null) return;
    setError(null);
    try {
      for (const file of files) {
        unwrap(
          await api.POST('/v1/knowledge-bases/{kb_id}/documents', {
            params: { path: { kb_id: selected } },
            body: {
              title: file.name.replace(/\.[^.]+$/, ''),
              content: await file.text(),
              content_type: contentTypeOf(file),
              source: file.name,
            },
          }),
        );
      }
      setUploaded(`${files.length} file(s) uploaded at ${new Date().toLocaleTimeString()}`);
      setFiles([]);
      bases.reload();
    } catch (reason) {
      setError(reason);
    }
  }

  async function search(event: FormEvent) {
    event.preventDefault();
    if (selected === null) return;
    setError(null);
    try {
      const found = unwrap(
        await api.POST('/v1/knowledge-bases/{kb_id}/search', {
          params: { path: { kb_id: selected } },
          body: { query, top_k: typeof topK === 'number' ? topK : 5 },
        }),
      );
      setResults(found.results);
    } catch (reason) {
      setError(reason);
    }
  }

  return (
    <Page title="Knowledge">
      <ErrorAlert error={bases.error ?? error} />
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder component="section" aria-labelledby="kb-title">
          <Stack>
            <Title order={3} size="h4" id="kb-title">
              Knowledge bases
            </Title>
            <Select
              label="Knowledge base"
              placeholder="Pick one"
              data={(bases.data?.knowledge_bases ?? []).map((base) => ({
                value: base.id,
                label: `${base.name} (${base.document_count} documents)`,
              }))}
              value={selected}
              onChange={(value) => {
                setSelected(value);
                setResults(null);
              }}
            />
            <form onSubmit={(event) => void create(event)}>
              <Group align="flex-end">
                <TextInput
                  label="New knowledge base"
                  required
                  value={newName}
                  onChange={(event) => setNewName(event.currentTarget.value)}
                />
                <Button type="submit">Create</Button>
              </Group>
            </form>
          </Stack>
        </Card>
        {selected !== null && (
          <Card withBorder component="section" aria-labelledby="upload-title">
            <form onSubmit={(event) => void upload(event)}>
              <Stack>
                <Title order={3} size="h4" id="upload-title">
                  Upload documents
                </Title>
                <FileInput
                  label="Files"
                  description="Text (.txt), Markdown (.md) or HTML (.html)"
                  multiple
                  accept=".txt,.md,.markdown,.html,.htm,text/plain,text/markdown,text/html"
                  value={files}
                  onChange={setFiles}
                  clearable
                />
                <Group>
                  <Button type="submit" disabled={files.length === 0}>
                    Upload
                  </Button>
                  {uploaded && (
                    <Text size="sm" role="status">
                      {uploaded}
                    </Text>
                  )}
                </Group>
              </Stack>
            </form>
          </Card>
        )}
      </SimpleGrid>
      {selected !== null && (
        <>
          <Card withBorder component="section" aria-labelledby="documents-title">
            <Title order={3} size="h4" id="documents-title" mb="xs">
              Documents
            </Title>
            <Table>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Title</Table.Th>
                  <Table.Th>Type</Table.Th>
                  <Table.Th>Chunks</Table.Th>
                  <Table.Th>Embedding</Table.Th>
                  <Table.Th>Added</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {documents.data?.documents.map((document) => (
                  <Table.Tr key={document.id}>
                    <Table.Td>{document.title}</Table.Td>
                    <Table.Td>{document.content_type}</Table.Td>
                    <Table.Td>{document.chunk_count}</Table.Td>
                    <Table.Td>{document.embedding_status}</Table.Td>
                    <Table.Td>{formatDate(document.created_at)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Card>
          <Card withBorder component="section" aria-labelledby="search-title">
            <form onSubmit={(event) => void search(event)}>
              <Stack>
                <Title order={3} size="h4" id="search-title">
                  Search
                </Title>
                <Group align="flex-end">
                  <TextInput
                    label="Query"
                    required
                    value={query}
                    onChange={(event) => setQuery(event.currentTarget.value)}
                    w={360}
                  />
                  <NumberInput
                    label="Results"
                    min={1}
                    max={50}
                    value={topK}
                    onChange={setTopK}
                    w={100}
                  />
                  <Button type="submit">Search</Button>
                </Group>
              </Stack>
            </form>
            {results !== null && results.length === 0 && <Text size="sm">Nothing found.</Text>}
            {results !== null && results.length > 0 && (
              <Stack mt="sm" data-testid="search-results">
                {results.map((result, index) => (
                  <Card key={`${result.document_id}-${index}`} withBorder p="xs">
                    <Group gap="xs">
                      <Text fw={600}>{result.title}</Text>
                      <Badge variant="filled" color="gray.8">
                        score {result.score.toFixed(3)}
                      </Badge>
                    </Group>
                    <Text size="sm" lineClamp={3}>
                      {result.text}
                    </Text>
                  </Card>
                ))}
              </Stack>
            )}
          </Card>
        </>
      )}
    </Page>
  );
}
