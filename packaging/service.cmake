# `flashps serve` as a systemd service (packaging/systemd/, README "Running as a service"): the
# units go where systemd looks for them under the prefix (lib/systemd/system: /usr/lib/systemd/
# system for the .deb, /usr/local/lib/systemd/system for a source install), the template of
# /etc/default/flashps beside the other shared files. Installed, never enabled: no maintainer
# script runs systemctl; `systemctl enable --now flashps.socket` is the administrator's choice.
# Checked by ctest service.systemd_units (systemd-analyze verify and security).
install(FILES ${CMAKE_CURRENT_LIST_DIR}/systemd/flashps.service ${CMAKE_CURRENT_LIST_DIR}/systemd/flashps.socket
        DESTINATION lib/systemd/system COMPONENT tools)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/systemd/flashps.default
        DESTINATION ${CMAKE_INSTALL_DATADIR}/flashps/systemd COMPONENT tools)
