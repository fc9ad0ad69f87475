// What the routing page asks of the service: route a message, teach the router, create and delete
// policies. One error area shows whichever of them ran last.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap, type paths } from '../../api/client';
import { keys } from '../../api/queries';
import { latestError } from '../../components/common';

export type RouteResult =
  paths['/v1/routing/route']['post']['responses'][200]['content']['application/json'];
type PolicyBody =
  paths['/v1/routing/policies']['post']['requestBody']['content']['application/json'];
export type RoutingStrategy = 'balanced' | 'quality' | 'cost' | 'latency';
export type RouteTarget = { type: 'agent' | 'pipeline' | 'model'; name: string };

export function useRoutingActions() {
  const queryClient = useQueryClient();
  // Kept apart from the mutations, so that the last route stays on screen while the next is asked.
  const [route, setRoute] = useState<RouteResult | null>(null);
  const [taught, setTaught] = useState<string | null>(null);
  const invalidatePolicies = () =>
    queryClient.invalidateQueries({ queryKey: keys.routingPolicies });

  const tryMessage = useMutation({
    mutationFn: async ({ message, strategy }: { message: string; strategy: string | null }) =>
      unwrap(
        await api.POST('/v1/routing/route', {
          body: {
            message,
            ...(strategy === null
              ? {}
              : { context: { preferences: { routing_strategy: strategy as RoutingStrategy } } }),
          },
        }),
      ),
    onMutate: () => setTaught(null),
    onSuccess: (result) => setRoute(result),
  });
  const teach = useMutation({
    mutationFn: async ({ message, target }: { message: string; target: RouteTarget }) =>
      unwrap(
        await api.POST('/v1/routing/feedback', {
          body: { message, selected_route: target.name, route_type: target.type },
        }),
      ),
    onSuccess: (answer, { message }) =>
      setTaught(`Taught: “${message}” → ${answer.route_type} ${answer.route_to}.`),
  });
  const createPolicy = useMutation({
    mutationFn: async (text: string) => {
      let definition: unknown;
      try {
        definition = JSON.parse(text);
      } catch {
        throw new Error('The policy is not valid JSON.');
      }
      // The service validates the definition and names the field it refuses.
      return unwrap(await api.POST('/v1/routing/policies', { body: definition as PolicyBody }));
    },
    onSuccess: invalidatePolicies,
  });
  const deletePolicy = useMutation({
    mutationFn: async (id: string) =>
      unwrap(
        await api.DELETE('/v1/routing/policies/{policy_id}', {
          params: { path: { policy_id: id } },
        }),
      ),
    onSuccess: invalidatePolicies,
  });

  return {
    route,
    taught,
    error: latestError(tryMessage, teach, createPolicy, deletePolicy),
    tryMessage: tryMessage.mutate,
    teach: teach.mutate,
    createPolicy: createPolicy.mutate,
    deletePolicy: deletePolicy.mutate,
  };
}
