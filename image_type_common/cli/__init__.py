# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

"""The command line both console scripts share, on cliff.

Installed with the ``cli`` extra (``image-type-filter[cli]``), which
nova-scheduler does not need: nothing the scheduler side or the compute
side's option registration imports comes from here. One module a job:
``app`` (the cliff App, the console scripts' body, and commands whose exit
code is part of the answer), ``column_types`` (output columns, and lists
and mappings that print as text) and ``arguments`` (the config and cloud
arguments).
"""
