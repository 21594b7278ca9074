#!/bin/sh
# A stand-in for kubectl in the lab: it records each call with what the node looks
# like at that moment (is the kubelet up, which CPU manager state file is there), so
# a test can tell whether the drain came before the kubelet's state reset.
kubelet=$(systemctl is-active kubelet.service)
cpu_state=$(cat /var/lib/kubelet/cpu_manager_state 2>/dev/null || echo absent)
echo "$* | kubelet=$kubelet | cpu_manager_state=$cpu_state" >> /var/log/gpuops-kubectl.log
