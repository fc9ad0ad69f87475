// Search the selected knowledge base: the query, how many results, and each result with its score.
import {
  Badge,
  Button,
  Card,
  Group,
  NumberInput,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useState, type FormEvent } from 'react';

interface SearchResult {
  document_id: string;
  title: string;
  text: string;
  score: number;
}

export function SearchCard({
  results,
  onSearch,
}: {
  results: readonly SearchResult[] | null;
  onSearch: (query: string, topK: number) => void;
}) {
  const [query, setQuery] = useState('');
  const [topK, setTopK] = useState<number | string>(5);

  function submit(event: FormEvent) {
    event.preventDefault();
    onSearch(query, typeof topK === 'number' ? topK : 5);
  }

  return (
    <Card withBorder component="section" aria-labelledby="search-title">
      <form onSubmit={submit}>
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
            <NumberInput label="Results" min={1} max={50} value={topK} onChange={setTopK} w={100} />
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
  );
}
