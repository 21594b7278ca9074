# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The top-level fields of the kubelet's config file, KubeletConfiguration (kubelet.config.k8s.io/v1beta1).

Kept as data, by hand, from the upstream Go type ``KubeletConfiguration`` in
kubernetes/kubernetes ``staging/src/k8s.io/kubelet/config/v1beta1/types.go`` (the same
fields as the reference page https://kubernetes.io/docs/reference/config-api/kubelet-config.v1beta1/),
Kubernetes 1.29 to 1.33. Each field's JSON name and the JSON type its Go type decodes from:

  string    Go string (a resource quantity or a CPU list is a string too);
  duration  metav1.Duration: a string such as "10s";
  int       int32 / int64;
  number    float64;
  bool      bool;
  map       map[string]string, map[string]bool, a struct (authentication, logging, ...);
  list      a slice.

The kubelet decodes its file strictly first and, on an unknown field, again leniently with a
warning (``codec.DecodeKubeletConfiguration``), so an unknown field is a warning here, while a
known field of the wrong type is an error: the kubelet cannot decode it and does not start.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

API_VERSION = "kubelet.config.k8s.io/v1beta1"
KIND = "KubeletConfiguration"
SOURCE = ("KubeletConfiguration, kubernetes/kubernetes staging/src/k8s.io/kubelet/config/v1beta1/types.go; "
          "https://kubernetes.io/docs/reference/config-api/kubelet-config.v1beta1/")

_STRING = ("address cgroupDriver cgroupRoot clusterDomain configMapAndSecretChangeDetectionStrategy "
           "containerLogMaxSize containerRuntimeEndpoint contentType cpuManagerPolicy hairpinMode healthzBindAddress "
           "imagePullCredentialsVerificationPolicy imageServiceEndpoint kubeReservedCgroup kubeletCgroups "
           "memoryManagerPolicy podCIDR podLogsDir providerID reservedSystemCPUs resolvConf "
           "showHiddenMetricsForVersion staticPodPath staticPodURL systemCgroups systemReservedCgroup tlsCertFile "
           "tlsMinVersion tlsPrivateKeyFile topologyManagerPolicy topologyManagerScope volumePluginDir "
           "apiVersion kind")
_DURATION = ("containerLogMonitorInterval cpuCFSQuotaPeriod cpuManagerReconcilePeriod "
             "evictionPressureTransitionPeriod fileCheckFrequency httpCheckFrequency imageMaximumGCAge "
             "imageMinimumGCAge nodeStatusReportFrequency nodeStatusUpdateFrequency runtimeRequestTimeout "
             "shutdownGracePeriod shutdownGracePeriodCriticalPods streamingConnectionIdleTimeout syncFrequency "
             "volumeStatsAggPeriod")
_INT = ("containerLogMaxFiles containerLogMaxWorkers eventBurst eventRecordQPS evictionMaxPodGracePeriod "
        "healthzPort imageGCHighThresholdPercent imageGCLowThresholdPercent iptablesDropBit iptablesMasqueradeBit "
        "kubeAPIBurst kubeAPIQPS maxOpenFiles maxParallelImagePulls maxPods nodeLeaseDurationSeconds "
        "nodeStatusMaxImages oomScoreAdj podPidsLimit podsPerCore port readOnlyPort registryBurst registryPullQPS")
_NUMBER = "memoryThrottlingFactor"
_BOOL = ("cgroupsPerQOS cpuCFSQuota enableContentionProfiling enableControllerAttachDetach "
         "enableDebugFlagsHandler enableDebuggingHandlers enableProfilingHandler enableServer enableSystemLogHandler "
         "enableSystemLogQuery failCgroupV1 failSwapOn kernelMemcgNotification localStorageCapacityIsolation "
         "makeIPTablesUtilChains mergeDefaultEvictionSettings protectKernelDefaults registerNode rotateCertificates "
         "runOnce seccompDefault serializeImagePulls serverTLSBootstrap singleProcessOOMKill")
_MAP = ("authentication authorization cpuManagerPolicyOptions crashLoopBackOff evictionHard "
        "evictionMinimumReclaim evictionSoft evictionSoftGracePeriod featureGates kubeReserved logging memorySwap "
        "qosReserved staticPodURLHeader systemReserved topologyManagerPolicyOptions tracing userNamespaces")
_LIST = ("allowedUnsafeSysctls clusterDNS enforceNodeAllocatable preloadedImagesVerificationAllowlist "
         "registerWithTaints reservedMemory shutdownGracePeriodByPodPriority tlsCipherSuites")

FIELDS = {}
for _kind, _names in (("string", _STRING), ("duration", _DURATION), ("int", _INT), ("number", _NUMBER),
                      ("bool", _BOOL), ("map", _MAP), ("list", _LIST)):
    FIELDS.update((_name, _kind) for _name in _names.split())

# The values of these maps are strings (resource quantities, eviction thresholds).
STRING_MAPS = ("evictionHard", "evictionMinimumReclaim", "evictionSoft", "evictionSoftGracePeriod", "kubeReserved",
               "systemReserved", "qosReserved", "cpuManagerPolicyOptions", "topologyManagerPolicyOptions")


def _type_ok(kind, value):
    if kind in ("string", "duration"):
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "map":
        return isinstance(value, dict)
    return isinstance(value, list)


def _reserved_memory_errors(entries):
    """reservedMemory: a list of {numaNode: int, limits: {resource: quantity string}} (MemoryReservation)."""
    found = []
    for index, entry in enumerate(entries):
        where = "reservedMemory[%d]" % index
        if not isinstance(entry, dict) or set(entry) - set(("numaNode", "limits")):
            found.append("%s: must be a map with numaNode and limits only" % where)
            continue
        node = entry.get("numaNode")
        if not isinstance(node, int) or isinstance(node, bool) or node < 0:
            found.append("%s.numaNode: must be an integer (NUMA node id), got %r" % (where, node))
        limits = entry.get("limits")
        if not isinstance(limits, dict) or not all(isinstance(value, str) for value in limits.values()):
            found.append("%s.limits: must be a map of resource names to quantity strings, got %r" % (where, limits))
    return found


def type_errors(config):
    """(errors, unknown field names) of a parsed kubelet config file against FIELDS."""
    if not isinstance(config, dict):
        return ["the file must hold a YAML map (a KubeletConfiguration), got %s" % type(config).__name__], []
    errors, unknown = [], []
    for name, value in config.items():
        kind = FIELDS.get(name)
        if kind is None:
            unknown.append(name)
            continue
        if value is None:
            continue
        if not _type_ok(kind, value):
            errors.append("%s: must be of type %s, got %r" % (name, kind, value))
        elif name in STRING_MAPS and not all(isinstance(item, str) for item in value.values()):
            errors.append("%s: every value must be a string (a quantity or threshold), got %r" % (name, value))
        elif name == "reservedMemory":
            errors.extend(_reserved_memory_errors(value))
    for name, wanted in (("apiVersion", API_VERSION), ("kind", KIND)):
        if config.get(name) not in (None, wanted):
            errors.append("%s: must be %s, got %r" % (name, wanted, config.get(name)))
    return errors, sorted(unknown, key=str)
