// The shell (navigation, colour scheme, logout) and the routes of every page.
import {
  ActionIcon,
  AppShell,
  Burger,
  Center,
  Group,
  Loader,
  NavLink,
  Text,
  Title,
  Button,
  useComputedColorScheme,
  useMantineColorScheme,
} from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { lazy, Suspense } from 'react';
import { Link, Navigate, Route, Routes, useLocation } from 'react-router';
import { useAuth } from './auth';
import { LoginPage } from './pages/LoginPage';

const OverviewPage = lazy(() => import('./pages/OverviewPage'));
const KeysPage = lazy(() => import('./pages/keys/KeysPage'));
const PlaygroundPage = lazy(() => import('./pages/playground/PlaygroundPage'));
const ConversationsPage = lazy(() => import('./pages/ConversationsPage'));
const ConversationDetailPage = lazy(() => import('./pages/ConversationDetailPage'));
const AgentsPage = lazy(() => import('./pages/agents/AgentsPage'));
const PipelinesPage = lazy(() => import('./pages/PipelinesPage'));
const PipelineEditorPage = lazy(() => import('./pages/pipeline-editor/PipelineEditorPage'));
const ExecutionPage = lazy(() => import('./pages/ExecutionPage'));
const KnowledgePage = lazy(() => import('./pages/knowledge/KnowledgePage'));
const RoutingPage = lazy(() => import('./pages/routing/RoutingPage'));
const VoicePage = lazy(() => import('./pages/voice/VoicePage'));
const UsagePage = lazy(() => import('./pages/UsagePage'));
const AuditLogPage = lazy(() => import('./pages/AuditLogPage'));

const navigation = [
  { to: '/', label: 'Overview' },
  { to: '/keys', label: 'API keys' },
  { to: '/playground', label: 'Playground' },
  { to: '/conversations', label: 'Conversations' },
  { to: '/agents', label: 'Agents' },
  { to: '/pipelines', label: 'Pipelines' },
  { to: '/knowledge', label: 'Knowledge' },
  { to: '/routing', label: 'Routing' },
  { to: '/voice', label: 'Voice' },
  { to: '/usage', label: 'Usage' },
  { to: '/audit-log', label: 'Audit log' },
];

function ColorSchemeToggle() {
  const { setColorScheme } = useMantineColorScheme();
  const computed = useComputedColorScheme('light');
  const next = computed === 'dark' ? 'light' : 'dark';
  return (
    <ActionIcon
      variant="default"
      size="lg"
      aria-label={`Switch to ${next} mode`}
      onClick={() => setColorScheme(next)}
    >
      <span aria-hidden="true">{computed === 'dark' ? '☀' : '☾'}</span>
    </ActionIcon>
  );
}

/** The title, the navigation toggle on small screens, who is signed in, the colour scheme, logout. */
function ShellHeader({ opened, onToggle }: { opened: boolean; onToggle: () => void }) {
  const { principal, logout } = useAuth();
  return (
    <Group h="100%" px="md" justify="space-between" wrap="nowrap">
      <Group gap="sm" wrap="nowrap">
        <Burger
          opened={opened}
          onClick={onToggle}
          hiddenFrom="sm"
          size="sm"
          aria-label="Toggle navigation"
        />
        <Title order={1} size="h4">
          AI Platform
        </Title>
      </Group>
      <Group gap="sm" wrap="nowrap">
        <Text size="sm" visibleFrom="sm">
          {principal?.user != null
            ? `${principal.account.name} · ${principal.user.email ?? principal.user.name ?? principal.user.subject} (single sign-on)`
            : `${principal?.account.name} · ${principal?.key.name} (${principal?.key.display_key})`}
        </Text>
        <ColorSchemeToggle />
        <Button variant="default" onClick={() => void logout()}>
          Log out
        </Button>
      </Group>
    </Group>
  );
}

/** The links to every page, the current one marked. */
function PageLinks({ onNavigate }: { onNavigate: () => void }) {
  const location = useLocation();
  return (
    <nav aria-label="Pages">
      {navigation.map((item) => (
        <NavLink
          key={item.to}
          component={Link}
          to={item.to}
          label={item.label}
          onClick={onNavigate}
          variant="filled"
          active={
            item.to === '/' ? location.pathname === '/' : location.pathname.startsWith(item.to)
          }
        />
      ))}
    </nav>
  );
}

function PageRoutes() {
  return (
    <Suspense
      fallback={
        <Center h={200}>
          <Loader aria-label="Loading the page" />
        </Center>
      }
    >
      <Routes>
        <Route path="/" element={<OverviewPage />} />
        <Route path="/keys" element={<KeysPage />} />
        <Route path="/playground" element={<PlaygroundPage />} />
        <Route path="/conversations" element={<ConversationsPage />} />
        <Route path="/conversations/:conversationId" element={<ConversationDetailPage />} />
        <Route path="/agents" element={<AgentsPage />} />
        <Route path="/pipelines" element={<PipelinesPage />} />
        <Route path="/pipelines/new" element={<PipelineEditorPage />} />
        <Route path="/pipelines/:pipelineId" element={<PipelineEditorPage />} />
        <Route path="/executions/:executionId" element={<ExecutionPage />} />
        <Route path="/knowledge" element={<KnowledgePage />} />
        <Route path="/routing" element={<RoutingPage />} />
        <Route path="/voice" element={<VoicePage />} />
        <Route path="/usage" element={<UsagePage />} />
        <Route path="/audit-log" element={<AuditLogPage />} />
        <Route path="/login" element={<Navigate to="/" replace />} />
        <Route path="*" element={<Text>This page does not exist.</Text>} />
      </Routes>
    </Suspense>
  );
}

function Shell() {
  const [opened, { toggle, close }] = useDisclosure();
  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <AppShell.Header>
        <ShellHeader opened={opened} onToggle={toggle} />
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main navigation">
        <PageLinks onNavigate={close} />
      </AppShell.Navbar>
      <AppShell.Main id="main">
        <PageRoutes />
      </AppShell.Main>
    </AppShell>
  );
}

export function App() {
  const { principal, loading } = useAuth();
  if (loading) {
    return (
      <Center h="100vh">
        <Loader aria-label="Loading" />
      </Center>
    );
  }
  return principal === null ? <LoginPage /> : <Shell />;
}
