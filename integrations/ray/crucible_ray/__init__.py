"""Crucible on a Ray cluster: `crucible serve --ray ADDRESS` runs each lane as a Ray actor
(lane.py), one per GPU of the cluster (docs/SERVE.md, "Lanes on a Ray cluster")."""
