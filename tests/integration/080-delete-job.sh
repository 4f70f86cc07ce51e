#!/usr/bin/env bash
# DELETE /v1/jobs/{job} and `rankscope delete`: the job is gone, others stay, the store is
# consistent after restart.
. "$(dirname "$0")/common.sh"
start_server
start_agent
sim_job doomed 4 20
sim_job kept 2 20
check "DELETE /v1/jobs/doomed is 200" sh -c "[ \$(curl -s -o '$WORK/del' -w '%{http_code}' -X DELETE '$HTTP/v1/jobs/doomed') = 200 ] && grep -q '\"deleted\":true' '$WORK/del'"
check "the job is gone" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/doomed/ranks') = 404 ]"
check "deleting it again is 404" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' -X DELETE '$HTTP/v1/jobs/doomed') = 404 ]"
check "rankscope delete works and says so" sh -c "'$BIN/rankscope' --server '$HTTP' delete kept | grep -q 'deleted job kept'"
check "rankscope delete of an unknown job exits 3" sh -c "'$BIN/rankscope' --server '$HTTP' delete nope; [ \$? = 3 ]"
check "PUT on a job is 405" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' -X PUT '$HTTP/v1/jobs/x') = 405 ]"
stop "$PID_server"
check "the store is consistent afterwards" "$BIN/rankscope-server" --check --data "$WORK/data"
finish
